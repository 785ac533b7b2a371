package webhost

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		name    string
		numeric bool
		addr    bool
	}{
		{"Example.COM", "example.com", false, false},
		{"example.com.", "example.com", false, false},
		{"bücher.example", "xn--bcher-kva.example", false, false},
		{"127.0.0.1", "127.0.0.1", false, true},
		{"[::1]", "::1", false, true},
		{"[0:0:0:0:0:0:0:1]", "::1", false, true},
		{"[::ffff:127.0.0.1]", "127.0.0.1", false, true},
		{"[::ffff:7f00:1]", "127.0.0.1", false, true},
		{"[fe80::1%eth0]", "fe80::1", false, true},
		{"2130706433", "127.0.0.1", true, true},
		{"0177.0.0.1", "127.0.0.1", true, true},
		{"0x7f.1", "127.0.0.1", true, true},
		{"0x7f000001", "127.0.0.1", true, true},
		{"127.1", "127.0.0.1", true, true},
		{"10.0.1", "10.0.0.1", true, true},
		{"0", "0.0.0.0", true, true},
		{"0x", "0.0.0.0", true, true},
		{"017700000001", "127.0.0.1", true, true},
		{"1e100.net", "1e100.net", false, false},
		{"under_score.example", "under_score.example", false, false},
		{"１２７.０.０.１", "127.0.0.1", false, true},
		{"¹", "0.0.0.1", true, true},
	}
	for _, c := range cases {
		h, err := Parse(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.name, h.Name, c.in)
		assert.Equal(t, c.numeric, h.Numeric, c.in)
		assert.Equal(t, c.addr, h.Addr.IsValid(), c.in)
	}
	for _, bad := range []string{"", ".", "4294967296", "08.0.0.1", "1.2.3.256", "exa mple.com", "a..b", "[127.0.0.1]", "[::1", "x\x00y", "[zz]"} {
		_, err := Parse(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestFromURL(t *testing.T) {
	h, err := FromURL("http://user:pw@Good.example@evil.example:8080/x")
	require.NoError(t, err)
	assert.Equal(t, "evil.example", h.Name, "the host is what follows the last @")
	_, err = FromURL("/relative/path")
	assert.Error(t, err)
	h, err = FromURL("http://[::1]:80/")
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("::1"), h.Addr)
}

func TestPattern(t *testing.T) {
	p, err := ParsePattern("*.Example.com")
	require.NoError(t, err)
	assert.True(t, p.Match("a.example.com"))
	assert.True(t, p.Match("a.b.example.com"))
	assert.False(t, p.Match("example.com"))
	assert.False(t, p.Match("aexample.com"))
	assert.Equal(t, "*.example.com", p.String())
	p, err = ParsePattern("[::1]")
	require.NoError(t, err)
	assert.True(t, p.Match("::1"))
	assert.Equal(t, "::1", p.String())
	for _, bad := range []string{"", "a.*.com", "*", "*.1.2.3.4"} {
		q, err := ParsePattern(bad)
		if bad == "*" {
			require.NoError(t, err)
			assert.True(t, q.Any)
			continue
		}
		assert.Error(t, err, bad)
	}
}

// FuzzParse checks that any host either parses into a canonical form
// that parses to itself, or is refused.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"example.com", "2130706433", "0177.0.0.1", "[::ffff:127.0.0.1]", "bücher.example", "0x7f.1", "*.a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(h.Name)
		if err != nil {
			t.Fatalf("%q parsed to %q, which does not parse: %v", s, h.Name, err)
		}
		if again.Name != h.Name || again.Addr != h.Addr || again.Numeric {
			t.Fatalf("%q parsed to %+v, and that to %+v", s, h, again)
		}
		if h.Addr.IsValid() && h.Addr.Is4In6() {
			t.Fatalf("%q kept an IPv4-mapped form", s)
		}
		if p, err := ParsePattern(s); err == nil && !p.Any && !p.Wildcard && !p.Match(h.Name) {
			t.Fatalf("the pattern %q does not match its own host %q", s, h.Name)
		}
	})
}
