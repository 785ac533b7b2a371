package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-harness/harness/internal/webhost"
	"github.com/go-harness/harness/tools/permission"
)

// Resolver looks up the addresses of a host name. *net.Resolver
// implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// refusal is why a URL, a redirect or an address is not fetched. Its
// text is written for the model.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// redirectElsewhere stops a redirect to a host that no rule allows: the
// model is told where it leads and may fetch it, which asks for
// permission like any fetch.
type redirectElsewhere struct {
	from, to string
}

func (r *redirectElsewhere) Error() string { return "redirect to " + r.to }

// badPorts are the ports the Fetch standard's "bad port" list names:
// services that speak other protocols (mail, shells, file sharing) which
// a crafted HTTP request could talk to. Browsers refuse them; so does
// web_fetch, unless the host is allowed exactly.
var badPorts = []int{1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
	109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
	540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000,
	6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080}

// guard holds what decides which URLs and addresses a fetch may reach.
type guard struct {
	policy    *permission.Policy
	hosts     map[string]bool // canonical hosts that may be private
	nets      []netip.Prefix
	resolver  Resolver
	dialer    net.Dialer
	maxRedirs int
}

// privateOK reports whether host (canonical) may be reached at a
// loopback, private or link-local address: the host configuration names
// it, or an allow rule names it exactly.
func (g *guard) privateOK(host string) bool {
	if g.hosts[host] {
		return true
	}
	return g.policy != nil && g.policy.WebHost(host).Exact
}

// checkURL judges one URL, the one the model gave or one a redirect
// leads to: the scheme, credentials, the host's form and the port. It
// returns the canonical host.
func (g *guard) checkURL(u *url.URL) (webhost.Host, error) {
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https":
	case "":
		return webhost.Host{}, refuse("%q is not an absolute URL: write it with its scheme, as in https://example.com/page.", u.String())
	case "file":
		return webhost.Host{}, refuse("file: URLs are refused: web_fetch reads http and https only. Read a local file with the read tool.")
	default:
		return webhost.Host{}, refuse("%s: URLs are refused: web_fetch reads http and https only.", scheme)
	}
	if u.Opaque != "" {
		return webhost.Host{}, refuse("%q is not a URL web_fetch can read: write it as %s://host/path.", u.String(), scheme)
	}
	if u.User != nil {
		return webhost.Host{}, refuse("URLs with credentials (user:password@) are refused: web_fetch sends no credentials. Fetch the URL without them.")
	}
	if u.Host == "" {
		return webhost.Host{}, refuse("the URL has no host.")
	}
	h, err := webhost.Parse(u.Hostname())
	if err != nil {
		return webhost.Host{}, refuse("the URL's host is not valid: %v.", err)
	}
	if h.Numeric {
		return webhost.Host{}, refuse("the host %q writes an IPv4 address in a non-standard numeric form, which resolvers read differently: write it as the dotted quad %s if you mean that address.", u.Hostname(), h.Name)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return webhost.Host{}, refuse("the port %q is not a valid port number.", p)
		}
		if slices.Contains(badPorts, n) && !g.privateOK(h.Name) {
			return webhost.Host{}, refuse("port %d is refused: it belongs to a service that does not speak HTTP (browsers refuse it too). A host allowed by name (WebFetch(domain:%s)) may use it.", n, h.Name)
		}
	}
	if g.policy != nil {
		if v := g.policy.WebHost(h.Name); v.List == "deny" {
			return webhost.Host{}, refuse("fetching from %s is denied by the rule %s.", h.Name, v.Rule)
		}
	}
	return h, nil
}

// checkRedirect judges one hop of a redirect chain (http.Client's
// CheckRedirect): the URL as checkURL does, and a change of host by the
// rules: a host an allow rule names is followed, one a deny rule names
// refused, and any other stops the fetch with a result that says where
// the redirect leads, so that fetching it goes through the permission
// decision the first URL went through.
func (g *guard) checkRedirect(to *url.URL, via []*url.URL) error {
	if len(via) > g.maxRedirs {
		return refuse("the URL redirected more than %d times; the last hop led to %s.", g.maxRedirs, to.Redacted())
	}
	h, err := g.checkURL(to)
	if err != nil {
		return fmt.Errorf("a redirect led to %s, which is refused: %w", to.Redacted(), err)
	}
	prev, err := webhost.Parse(via[len(via)-1].Hostname())
	if err != nil || prev.Name == h.Name || g.policy == nil {
		return nil
	}
	if v := g.policy.WebHost(h.Name); v.List != "allow" {
		return &redirectElsewhere{from: via[0].String(), to: to.String()}
	}
	return nil
}

// dial connects to a host:port the transport asks for. The host is
// resolved once; every address must be public (or allowed), and the
// connection goes to one of those checked addresses, so no second
// lookup can swap in another (DNS rebinding). The dialer's Control hook
// checks the address of the socket itself as well, which also covers a
// proxy or any other path to connect.
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	hostPart, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	h, err := webhost.Parse(hostPart)
	if err != nil {
		return nil, refuse("the host %q is not valid: %v.", hostPart, err)
	}
	var addrs []netip.Addr
	if h.Addr.IsValid() {
		addrs = []netip.Addr{h.Addr}
	} else {
		resolver := g.resolver
		if resolver == nil {
			resolver = net.DefaultResolver
		}
		addrs, err = resolver.LookupNetIP(ctx, "ip", h.Name)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("no address found for %s", h.Name)
		}
	}
	for _, a := range addrs {
		if err := g.checkAddr(h, a); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, a := range addrs {
		d := g.dialer
		checked := a.WithZone("").Unmap()
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refuse("the connection to %s was stopped: its address %q could not be read.", h.Name, address)
			}
			got := ap.Addr().WithZone("").Unmap()
			if got != checked {
				return refuse("the connection to %s was stopped: it went to %s, not to the checked address %s.", h.Name, got, checked)
			}
			return g.checkAddr(h, got)
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		var r *refusal
		if errors.As(err, &r) {
			return nil, err
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// checkAddr refuses a special address unless the host may be private
// or the address is in an allowed range. Cloud metadata addresses are
// reached only when the address itself is allowed (by a rule naming it
// or a range holding it), never through a name.
func (g *guard) checkAddr(h webhost.Host, a netip.Addr) error {
	a = a.WithZone("").Unmap()
	what := classify(a)
	if what == "" {
		return nil
	}
	for _, n := range g.nets {
		if n.Contains(a) {
			return nil
		}
	}
	metadata := strings.Contains(what, "metadata")
	if g.privateOK(h.Name) && (!metadata || h.Addr.IsValid()) {
		return nil
	}
	if h.Addr.IsValid() {
		return refuse("%s is %s, which web_fetch does not reach unless allowed: a rule such as WebFetch(domain:%s) allows it.", a, what, h.Name)
	}
	return refuse("%s resolves to %s, %s, which web_fetch does not reach unless allowed: a rule such as WebFetch(domain:%s) allows it.", h.Name, a, what, h.Name)
}
