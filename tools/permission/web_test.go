package permission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fetch(u string) map[string]any { return map[string]any{"url": u} }

func TestWebFetchRules(t *testing.T) {
	ws := t.TempDir()
	cases := []struct {
		name             string
		mode             Mode
		allow, ask, deny []string
		url              string
		want             Outcome
		rule             string
	}{
		{name: "no rule asks", url: "https://example.com/", want: Ask},
		{name: "plan mode asks, not denies", mode: ModePlan, url: "https://example.com/", want: Ask},
		{name: "accept-edits still asks", mode: ModeAcceptEdits, url: "https://example.com/", want: Ask},
		{name: "bypass allows", mode: ModeBypass, url: "https://example.com/", want: Allow},
		{name: "domain allows", allow: []string{"WebFetch(domain:example.com)"}, url: "https://example.com/a", want: Allow, rule: "WebFetch(domain:example.com)"},
		{name: "domain is case-insensitive", allow: []string{"WebFetch(domain:Example.COM)"}, url: "https://EXAMPLE.com./a", want: Allow},
		{name: "domain is exact", allow: []string{"WebFetch(domain:example.com)"}, url: "https://www.example.com/", want: Ask},
		{name: "domain is not a suffix", allow: []string{"WebFetch(domain:example.com)"}, url: "https://evilexample.com/", want: Ask},
		{name: "wildcard covers subdomains", allow: []string{"WebFetch(domain:*.example.com)"}, url: "https://a.b.example.com/", want: Allow},
		{name: "wildcard does not cover the domain", allow: []string{"WebFetch(domain:*.example.com)"}, url: "https://example.com/", want: Ask},
		{name: "WebFetch alone allows all", allow: []string{"WebFetch"}, url: "https://example.com/", want: Allow},
		{name: "domain:* allows all", allow: []string{"WebFetch(domain:*)"}, url: "http://x.org/", want: Allow},
		{name: "tool name rule", allow: []string{"web_fetch"}, url: "http://x.org/", want: Allow},
		{name: "deny beats allow", allow: []string{"WebFetch"}, deny: []string{"WebFetch(domain:*.evil.com)"}, url: "https://a.evil.com/", want: Deny},
		{name: "deny in bypass", mode: ModeBypass, deny: []string{"WebFetch(domain:evil.com)"}, url: "https://evil.com/", want: Deny},
		{name: "ask beats allow", allow: []string{"WebFetch"}, ask: []string{"WebFetch(domain:x.org)"}, url: "https://x.org/", want: Ask},
		{name: "plan mode with an allow rule", mode: ModePlan, allow: []string{"WebFetch(domain:x.org)"}, url: "https://x.org/", want: Allow},
		{name: "IP rule", allow: []string{"WebFetch(domain:127.0.0.1)"}, url: "http://127.0.0.1:8080/", want: Allow},
		{name: "IP rule matches mapped IPv6", allow: []string{"WebFetch(domain:127.0.0.1)"}, url: "http://[::ffff:127.0.0.1]/", want: Allow},
		{name: "IPv6 rule with brackets", allow: []string{"WebFetch(domain:[::1])"}, url: "http://[0:0::1]/", want: Allow},
		{name: "decimal IPv4 form is the address for deny", deny: []string{"WebFetch(domain:127.0.0.1)"}, url: "http://2130706433/", want: Deny},
		{name: "octal IPv4 form is the address for deny", deny: []string{"WebFetch(domain:127.0.0.1)"}, url: "http://0177.0.0.1/", want: Deny},
		{name: "credentials do not hide the host", deny: []string{"WebFetch(domain:evil.com)"}, url: "http://good.com@evil.com/", want: Deny},
		{name: "IDN host", allow: []string{"WebFetch(domain:xn--bcher-kva.example)"}, url: "https://bücher.example/", want: Allow},
		{name: "IDN rule", allow: []string{"WebFetch(domain:bücher.example)"}, url: "https://xn--bcher-kva.example/", want: Allow},
		{name: "spaces around the URL, as web_fetch trims them", allow: []string{"WebFetch(domain:example.com)"}, url: "  https://example.com/ \n", want: Allow},
		{name: "unreadable URL is never allowed by a domain rule", allow: []string{"WebFetch(domain:example.com)"}, url: "http://exa mple.com/", want: Ask},
		{name: "unreadable URL matches deny rules", deny: []string{"WebFetch(domain:example.com)"}, url: "http://%zz/", want: Deny},
		{name: "unreadable URL denied in bypass when domains are denied", mode: ModeBypass, deny: []string{"WebFetch(domain:example.com)"}, url: "::::", want: Deny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(Rules{Mode: c.mode, Allow: c.allow, Ask: c.ask, Deny: c.deny, Home: ws})
			require.NoError(t, err)
			d := p.Decide(call(ws, "web_fetch", fetch(c.url)))
			assert.Equal(t, c.want, d.Outcome, d.Reason)
			if c.rule != "" {
				assert.Equal(t, c.rule, d.Rule)
			}
		})
	}
}

func TestWebFetchSuggestAndPreview(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{Home: ws})
	require.NoError(t, err)
	d := p.Decide(call(ws, "web_fetch", fetch("https://Docs.Example.com/x?y=1")))
	assert.Equal(t, Ask, d.Outcome)
	assert.Equal(t, "WebFetch(domain:docs.example.com)", d.Suggest)
	assert.Equal(t, "https://Docs.Example.com/x?y=1", d.Preview)
	assert.Contains(t, d.Reason, "docs.example.com")

	q, err := p.WithAllow(d.Suggest)
	require.NoError(t, err)
	assert.Equal(t, Allow, q.Decide(call(ws, "web_fetch", fetch("https://docs.example.com/other"))).Outcome)
}

func TestWebHost(t *testing.T) {
	p, err := New(Rules{
		Allow: []string{"WebFetch(domain:127.0.0.1)", "WebFetch(domain:*.corp.example)", "WebFetch(domain:intranet.example)", "WebFetch(domain:both.example)"},
		Ask:   []string{"WebFetch(domain:both.example)"},
		Deny:  []string{"WebFetch(domain:evil.example)"},
		Home:  t.TempDir(),
	})
	require.NoError(t, err)
	cases := []struct {
		host string
		want HostVerdict
	}{
		{"127.0.0.1", HostVerdict{List: "allow", Rule: "WebFetch(domain:127.0.0.1)", Exact: true}},
		{"[::ffff:127.0.0.1]", HostVerdict{List: "allow", Rule: "WebFetch(domain:127.0.0.1)", Exact: true}},
		{"intranet.example", HostVerdict{List: "allow", Rule: "WebFetch(domain:intranet.example)", Exact: true}},
		{"a.corp.example", HostVerdict{List: "allow", Rule: "WebFetch(domain:*.corp.example)"}},
		{"both.example", HostVerdict{List: "ask", Rule: "WebFetch(domain:both.example)"}},
		{"evil.example", HostVerdict{List: "deny", Rule: "WebFetch(domain:evil.example)"}},
		{"other.example", HostVerdict{}},
		{"", HostVerdict{List: "deny", Rule: "WebFetch(domain:evil.example)"}}, // unreadable: deny rules may name it
	}
	for _, c := range cases {
		assert.Equal(t, c.want, p.WebHost(c.host), c.host)
	}

	// WebFetch alone allows every host but unlocks no private address.
	all, err := New(Rules{Allow: []string{"WebFetch", "WebFetch(domain:*)"}, Home: t.TempDir()})
	require.NoError(t, err)
	assert.Equal(t, HostVerdict{List: "allow", Rule: "WebFetch"}, all.WebHost("127.0.0.1"))
	// Bypass mode decides calls, not hosts: it unlocks nothing either.
	by, err := New(Rules{Mode: ModeBypass, Home: t.TempDir()})
	require.NoError(t, err)
	assert.Equal(t, HostVerdict{}, by.WebHost("127.0.0.1"))
}

func TestWebRulesParse(t *testing.T) {
	for _, ok := range []string{"WebFetch", "WebFetch(domain:example.com)", "WebFetch(domain:*.example.com)", "WebFetch(domain:*)", "WebFetch(domain:[::1])", "WebFetch(domain:10.0.0.1)", "WebSearch"} {
		_, err := New(Rules{Allow: []string{ok}, Home: "/"})
		assert.NoError(t, err, ok)
	}
	for _, bad := range []string{"WebFetch(example.com)", "WebFetch(domain:)", "WebFetch(domain:a.*.com)", "WebFetch(domain:*.10.0.0.1)", "WebFetch(domain:exa mple.com)", "WebSearch(x)", "WebFetch(url:https://x)"} {
		_, err := New(Rules{Allow: []string{bad}, Home: "/"})
		assert.Error(t, err, bad)
	}
}

func TestWebSearchRule(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{Deny: []string{"WebSearch"}, Home: ws})
	require.NoError(t, err)
	assert.Equal(t, Deny, p.Decide(call(ws, "web_search", map[string]any{"query": "x"})).Outcome)
	q, err := New(Rules{Home: ws})
	require.NoError(t, err)
	assert.Equal(t, Allow, q.Decide(call(ws, "web_search", map[string]any{"query": "x"})).Outcome, "a search has no side effects")
}
