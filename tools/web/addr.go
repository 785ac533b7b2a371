package web

import (
	"net/netip"
	"strconv"
	"strings"
)

// special is a range of addresses that a fetch may not reach unless the
// host allows it, with the words that name it in a refusal.
type special struct {
	prefix netip.Prefix
	what   string
}

// specialRanges are the addresses that are not the public internet:
// where a server inside the host's network, the host itself or a cloud
// provider's metadata service answers. IPv6 forms that carry an IPv4
// address (mapped, compatible, NAT64, 6to4) are judged by that address
// first (see classify).
var specialRanges = func() []special {
	list := []struct{ cidr, what string }{
		{"169.254.169.254/32", "a cloud metadata address"},
		{"fd00:ec2::254/128", "a cloud metadata address"},
		{"0.0.0.0/8", "an unspecified (\"this network\") address"},
		{"10.0.0.0/8", "a private address (RFC 1918)"},
		{"100.64.0.0/10", "a carrier-grade NAT address (RFC 6598)"},
		{"127.0.0.0/8", "a loopback address"},
		{"169.254.0.0/16", "a link-local address"},
		{"172.16.0.0/12", "a private address (RFC 1918)"},
		{"192.0.0.0/24", "an IETF protocol address (RFC 6890)"},
		{"192.0.2.0/24", "a documentation address"},
		{"192.88.99.0/24", "a 6to4 relay address"},
		{"192.168.0.0/16", "a private address (RFC 1918)"},
		{"198.18.0.0/15", "a benchmarking address"},
		{"198.51.100.0/24", "a documentation address"},
		{"203.0.113.0/24", "a documentation address"},
		{"224.0.0.0/4", "a multicast address"},
		{"240.0.0.0/4", "a reserved address"},
		{"::/128", "an unspecified address"},
		{"::1/128", "a loopback address"},
		{"::/96", "an IPv4-compatible address"},
		{"64:ff9b:1::/48", "a local-use NAT64 address"},
		{"100::/64", "a discard-only address"},
		{"2001::/32", "a Teredo address"},
		{"2001:db8::/32", "a documentation address"},
		{"fc00::/7", "a unique local (private) address"},
		{"fe80::/10", "a link-local address"},
		{"fec0::/10", "a site-local address"},
		{"ff00::/8", "a multicast address"},
	}
	out := make([]special, len(list))
	for i, s := range list {
		out[i] = special{prefix: netip.MustParsePrefix(s.cidr), what: s.what}
	}
	return out
}()

// Embedded IPv4 address forms of IPv6.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
	compatible  = netip.MustParsePrefix("::/96")
)

// classify says what kind of special address a is ("a loopback
// address"), or "" for a public one. An IPv6 address that carries an
// IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) is special
// when the IPv4 address is, so ::ffff:127.0.0.1 and 64:ff9b::a00:1 are
// refused like 127.0.0.1 and 10.0.0.1.
func classify(a netip.Addr) string {
	a = a.WithZone("")
	if !a.IsValid() {
		return "an invalid address"
	}
	if a.Is4In6() {
		if w := classify(a.Unmap()); w != "" {
			return w + " (IPv4-mapped)"
		}
		return ""
	}
	if a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		switch {
		case nat64Prefix.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToFour.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		case compatible.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		}
		if v4.IsValid() {
			if w := classify(v4); w != "" {
				return w + " (embedded in IPv6)"
			}
		}
	}
	for _, s := range specialRanges {
		if s.prefix.Contains(a) {
			return s.what
		}
	}
	if a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "the broadcast address"
	}
	return ""
}

// numericIPv4 reports whether host is an IPv4 address in one of the
// forms inet_aton accepts beside the dotted quad: one to four parts,
// each decimal, octal (leading 0) or hexadecimal (leading 0x), such as
// 2130706433, 0177.0.0.1 or 0x7f.1. Resolvers differ on these forms (the
// C library reads them as addresses; others look them up as names), so
// a URL may not use them: what a name means must not depend on which
// resolver reads it.
func numericIPv4(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if !numericPart(p) {
			return false
		}
	}
	return true
}

func numericPart(p string) bool {
	switch {
	case p == "":
		return false
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		if len(p) == 2 {
			return true // "0x" alone reads as 0
		}
		_, err := strconv.ParseUint(p[2:], 16, 64)
		return err == nil || isRangeErr(err)
	default:
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
		return true
	}
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
