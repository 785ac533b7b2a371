// Package webhost reads the host of a web address in the one form that
// the web tools (tools/web) and the permission rules
// (tools/permission's WebFetch(domain:...)) compare, so that a rule and
// a fetch can never disagree about which host a URL names.
//
// It imports golang.org/x/net/idna and the standard library.
package webhost

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Host is a URL's host in canonical form.
type Host struct {
	// Name is the host as rules compare it: lower-case ASCII (an
	// internationalized name in its xn-- form) without a trailing dot,
	// or an IP address in its canonical text (IPv6 without brackets or
	// zone; an IPv4-mapped IPv6 address as the IPv4 address).
	Name string
	// Addr is set when the host is an IP address.
	Addr netip.Addr
	// Numeric reports that the URL wrote an IPv4 address in a form other
	// than the dotted quad (2130706433, 0177.0.0.1, 0x7f.1), which
	// resolvers read differently. Name and Addr hold the address it
	// denotes.
	Numeric bool
}

// Parse returns the canonical form of a host as a URL carries it
// (brackets around an IPv6 address allowed).
func Parse(host string) (Host, error) {
	h := strings.TrimSuffix(host, ".")
	if h == "" {
		return Host{}, errors.New("the host is empty")
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() {
			return Host{}, fmt.Errorf("%q is not an IPv6 address", h)
		}
		return addrHost(a), nil
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return addrHost(a), nil
	}
	if a, numeric, ok := inetAton(h); numeric {
		if !ok {
			return Host{}, fmt.Errorf("%q looks like a numeric IPv4 address but is not a valid one", host)
		}
		hs := addrHost(a)
		hs.Numeric = true
		return hs, nil
	}
	name, err := asciiName(h)
	if err != nil {
		return Host{}, err
	}
	if name != strings.ToLower(h) {
		// Mapping may make an address of a name: fullwidth or
		// superscript digits map to ASCII ones ("１２７.０.０.１").
		return Parse(name)
	}
	return Host{Name: name}, nil
}

// FromURL parses raw (spaces around it ignored, as web_fetch ignores
// them) and returns its host. It does not judge the scheme or anything
// else of the URL.
func FromURL(raw string) (Host, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return Host{}, err
	}
	if u.Host == "" {
		return Host{}, errors.New("the URL has no host")
	}
	return Parse(u.Hostname())
}

func addrHost(a netip.Addr) Host {
	a = a.WithZone("").Unmap()
	return Host{Name: a.String(), Addr: a}
}

// asciiName lower-cases a host name, converting an internationalized
// one to its ASCII form, and checks its characters.
func asciiName(h string) (string, error) {
	ascii := true
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%q is not a valid internationalized host name: %v", h, err)
		}
		h = a
	}
	h = strings.ToLower(h)
	if len(h) > 253 {
		return "", fmt.Errorf("the host name is %d characters long; at most 253 are allowed", len(h))
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("%q is not a valid host name (empty or overlong label)", h)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("%q is not a valid host name (character %q)", h, c)
			}
		}
	}
	return h, nil
}

// inetAton reads h as the C library's inet_aton does: one to four
// parts, each decimal, octal (leading 0) or hexadecimal (leading 0x),
// the last filling the remaining bytes. numeric reports that h has that
// shape; ok that it also denotes an address (no part too large).
func inetAton(h string) (a netip.Addr, numeric, ok bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false, false
	}
	vals := make([]uint64, len(parts))
	valid := true
	for i, p := range parts {
		v, shape, fits := atonPart(p)
		if !shape {
			return netip.Addr{}, false, false
		}
		if !fits {
			valid = false
		}
		vals[i] = v
	}
	if !valid {
		return netip.Addr{}, true, false
	}
	var n uint64
	last := len(vals) - 1
	for i, v := range vals[:last] {
		if v > 0xff {
			return netip.Addr{}, true, false
		}
		n |= v << (24 - 8*uint(i))
	}
	if vals[last] >= 1<<(32-8*uint(last)) {
		return netip.Addr{}, true, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true, true
}

// atonPart reads one part of an inet_aton address: shape reports that
// it is a number in one of the three bases, fits that it is also valid
// (octal digits only after a leading 0, no overflow).
func atonPart(p string) (v uint64, shape, fits bool) {
	if p == "" {
		return 0, false, false
	}
	base, digits := 10, p
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, digits = 16, p[2:]
		if digits == "" {
			return 0, true, true
		}
		for i := 0; i < len(digits); i++ {
			c := digits[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return 0, false, false
			}
		}
	default:
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return 0, false, false
			}
		}
		if len(p) > 1 && p[0] == '0' {
			base, digits = 8, p[1:]
		}
	}
	v, err := strconv.ParseUint(digits, base, 32)
	if err != nil {
		return 0, true, false
	}
	return v, true, true
}

// Pattern is a host pattern of a rule: a host, or *.suffix for every
// host below a domain, or * for every host.
type Pattern struct {
	// Host is the canonical host, or the suffix (without "*.") when
	// Wildcard is set; empty with Any.
	Host     string
	Wildcard bool
	Any      bool
}

// ParsePattern reads a host pattern: example.com, *.example.com, *, an
// IP address (with or without brackets for IPv6).
func ParsePattern(s string) (Pattern, error) {
	s = strings.TrimSpace(s)
	if s == "*" {
		return Pattern{Any: true}, nil
	}
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		h, err := Parse(rest)
		if err != nil {
			return Pattern{}, err
		}
		if h.Addr.IsValid() {
			return Pattern{}, fmt.Errorf("%q: a wildcard goes before a domain name, not an address", s)
		}
		return Pattern{Host: h.Name, Wildcard: true}, nil
	}
	if strings.Contains(s, "*") {
		return Pattern{}, fmt.Errorf("%q: * may only start the pattern, as in *.example.com", s)
	}
	h, err := Parse(s)
	if err != nil {
		return Pattern{}, err
	}
	return Pattern{Host: h.Name}, nil
}

// Match reports whether the pattern covers a canonical host name. A
// wildcard covers the hosts below its domain, not the domain itself.
func (p Pattern) Match(host string) bool {
	switch {
	case p.Any:
		return true
	case p.Wildcard:
		return strings.HasSuffix(host, "."+p.Host)
	}
	return host == p.Host
}

// String is the pattern as a rule writes it.
func (p Pattern) String() string {
	switch {
	case p.Any:
		return "*"
	case p.Wildcard:
		return "*." + p.Host
	}
	return p.Host
}
