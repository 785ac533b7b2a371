package permission

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

// ruleKind is one kind of rule with a call it matches.
type ruleKind struct {
	name    string
	rule    string
	tool    string
	args    map[string]any
	effects bool // the call has side effects
	edit    bool // the call edits a file inside the workspace
	web     bool // the call fetches from a host
}

var ruleKinds = []ruleKind{
	{name: "Read", rule: "Read(src/**)", tool: "read", args: map[string]any{"file_path": "src/a.go"}},
	{name: "Edit", rule: "Edit(src/**)", tool: "write", args: map[string]any{"file_path": "src/a.go", "content": "x"}, effects: true, edit: true},
	{name: "Write", rule: "Write(src/**)", tool: "edit", args: map[string]any{"file_path": "src/a.go"}, effects: true, edit: true},
	{name: "Bash", rule: "Bash(make:*)", tool: "bash", args: map[string]any{"command": "make test"}, effects: true},
	{name: "shell_send", rule: "Bash(make:*)", tool: "shell_send", args: map[string]any{"session_id": "sh1", "command": "make test"}, effects: true},
	{name: "tool name", rule: "mcp__gh__create_issue", tool: "mcp__gh__create_issue", args: map[string]any{"title": "x"}, effects: true},
	{name: "MCP server", rule: "mcp__gh", tool: "mcp__gh__create_issue", args: map[string]any{"title": "x"}, effects: true},
	{name: "MCP wildcard", rule: "mcp__gh__create_*", tool: "mcp__gh__create_issue", args: map[string]any{"title": "x"}, effects: true},
	{name: "tool without side effects", rule: "session_search", tool: "session_search", args: map[string]any{"query": "x"}},
	{name: "WebFetch", rule: "WebFetch(domain:example.com)", tool: "web_fetch", args: map[string]any{"url": "https://example.com/a"}, web: true},
	{name: "WebFetch wildcard", rule: "WebFetch(domain:*.example.com)", tool: "web_fetch", args: map[string]any{"url": "https://docs.example.com/a"}, web: true},
}

// want is the outcome the design gives a call of kind k under mode when
// its rule is on list ("" for no rule): deny wins everywhere, bypass
// allows the rest, plan denies side effects, then ask, then allow, then
// what the mode does with a call no rule decides.
func (k ruleKind) want(mode Mode, list string) (Outcome, bool) {
	switch {
	case list == "deny":
		return Deny, true
	case mode == ModeBypass:
		return Allow, false // the mode decides; the reason says so
	case mode == ModePlan && k.effects:
		return Deny, false
	case list == "ask":
		return Ask, true
	case list == "allow":
		return Allow, true
	case mode == ModeAcceptEdits && k.edit:
		return Allow, false
	case k.web:
		return Ask, false
	case k.effects:
		return Ask, false
	}
	return Allow, false
}

// Every mode against every kind of rule on every list, and with no rule:
// the outcome, the rule and list named, the mode recorded, a reason.
func TestDecideModeByRuleKind(t *testing.T) {
	ws := t.TempDir()
	modes := []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass}
	for _, k := range ruleKinds {
		for _, mode := range modes {
			for _, list := range []string{"", "allow", "ask", "deny"} {
				t.Run(k.name+"/"+string(mode)+"/"+list, func(t *testing.T) {
					r := Rules{Mode: mode}
					switch list {
					case "allow":
						r.Allow = []string{k.rule}
					case "ask":
						r.Ask = []string{k.rule}
					case "deny":
						r.Deny = []string{k.rule}
					}
					p, err := New(r)
					require.NoError(t, err)
					c := call(ws, k.tool, k.args)
					c.Spec.SideEffects = k.effects && !k.edit && k.tool != "bash" && k.tool != "shell_send"
					d := p.Decide(c)
					want, byRule := k.want(mode, list)
					assert.Equal(t, want, d.Outcome, "reason: %s", d.Reason)
					assert.Equal(t, mode, d.Mode)
					assert.NotEmpty(t, d.Reason)
					if byRule {
						assert.Equal(t, k.rule, d.Rule)
						assert.Equal(t, list, d.List)
						assert.Contains(t, d.Reason, k.rule, "the reason names the rule")
					} else if mode != ModeBypass {
						assert.Empty(t, d.Rule, "the mode decided")
						assert.Empty(t, d.List)
					}
					if d.Outcome != Ask {
						assert.Empty(t, d.Suggest, "a suggestion only when asking")
					}
				})
			}
		}
	}
}

// A rule of one kind never decides a call of another.
func TestRuleKindsDoNotCross(t *testing.T) {
	ws := t.TempDir()
	for _, k := range ruleKinds {
		p, err := New(Rules{Deny: []string{k.rule}})
		require.NoError(t, err)
		for _, other := range ruleKinds {
			if other.tool == k.tool || strings.HasPrefix(other.tool, "mcp__") && strings.HasPrefix(k.tool, "mcp__") ||
				other.tool == "bash" && k.tool == "shell_send" || other.tool == "shell_send" && k.tool == "bash" ||
				(other.name == "Edit" || other.name == "Write") && (k.name == "Edit" || k.name == "Write") {
				continue
			}
			d := p.Decide(call(ws, other.tool, other.args))
			assert.NotEqual(t, Deny, d.Outcome, "%s denied by %s: %s", other.name, k.rule, d.Reason)
		}
	}
}

// What an approver is offered when a call asks: a rule that would allow
// calls like it, and the call in one line.
func TestSuggestAndPreviewByKind(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{})
	require.NoError(t, err)
	long := strings.Repeat("word ", 50)
	for _, c := range []struct {
		name          string
		tool          string
		args          map[string]any
		suggest, prev string
	}{
		{name: "edit in a directory", tool: "write", args: map[string]any{"file_path": "src/pkg/a.go"}, suggest: "Edit(src/pkg/**)", prev: filepath.Join(ws, "src/pkg/a.go")},
		{name: "edit at the root", tool: "edit", args: map[string]any{"file_path": "a.go"}, suggest: "Edit(./a.go)", prev: filepath.Join(ws, "a.go")},
		{name: "edit outside", tool: "write", args: map[string]any{"file_path": "/etc/x/y.conf"}, suggest: "Edit(//etc/x/y.conf)", prev: "/etc/x/y.conf"},
		{name: "bash, two words", tool: "bash", args: map[string]any{"command": "go test ./..."}, suggest: "Bash(go test:*)", prev: "go test ./..."},
		{name: "bash, a flag second", tool: "bash", args: map[string]any{"command": "pytest -x"}, suggest: "Bash(pytest:*)", prev: "pytest -x"}, // ls -la is read-only: it runs
		{name: "bash, compound", tool: "bash", args: map[string]any{"command": "make && make install"}, suggest: "", prev: "make && make install"},
		{name: "bash, assignment", tool: "bash", args: map[string]any{"command": "CC=clang make"}, suggest: "", prev: "CC=clang make"},
		{name: "bash, white space folded", tool: "bash", args: map[string]any{"command": "make \t  all"}, suggest: "Bash(make all:*)", prev: "make all"},
		{name: "web", tool: "web_fetch", args: map[string]any{"url": "https://Example.COM/docs"}, suggest: "WebFetch(domain:example.com)", prev: "https://Example.COM/docs"},
		{name: "web without a host", tool: "web_fetch", args: map[string]any{"url": "not a url"}, suggest: "", prev: "not a url"},
		{name: "mcp tool", tool: "mcp__gh__create_issue", args: map[string]any{"title": "x"}, suggest: "mcp__gh__create_issue", prev: `mcp__gh__create_issue {"title":"x"}`},
		{name: "long preview", tool: "bash", args: map[string]any{"command": "make " + long}, suggest: "Bash(make word:*)", prev: string([]rune(strings.TrimSpace("make " + long))[:159]) + "…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := p.Decide(call(ws, c.tool, c.args))
			require.Equal(t, Ask, d.Outcome, d.Reason)
			assert.Equal(t, c.suggest, d.Suggest)
			assert.Equal(t, c.prev, d.Preview)
			assert.LessOrEqual(t, len([]rune(d.Preview)), 160)
			if c.suggest == "" {
				return
			}
			q, err := p.WithAllow(d.Suggest)
			require.NoError(t, err, "the suggestion is a rule")
			assert.Equal(t, Allow, q.Decide(call(ws, c.tool, c.args)).Outcome, "the suggestion allows the call")
		})
	}
}

// WithAllow adds rules to a copy; a rule that does not parse is an error
// and changes nothing.
func TestWithAllow(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{Mode: ModeAcceptEdits, Deny: []string{"Bash(rm:*)"}})
	require.NoError(t, err)
	q, err := p.WithAllow("Bash(make:*)", "mcp__gh")
	require.NoError(t, err)
	assert.Equal(t, ModeAcceptEdits, q.Mode(), "the mode is kept")
	assert.Equal(t, Allow, q.Decide(call(ws, "bash", map[string]any{"command": "make"})).Outcome)
	assert.Equal(t, Allow, q.Decide(call(ws, "mcp__gh__create_issue", map[string]any{})).Outcome)
	assert.Equal(t, Ask, p.Decide(call(ws, "bash", map[string]any{"command": "make"})).Outcome, "p is unchanged")

	r, err := q.WithAllow("Bash(rm:*)")
	require.NoError(t, err)
	assert.Equal(t, Deny, r.Decide(call(ws, "bash", map[string]any{"command": "rm x"})).Outcome, "deny rules still win")

	_, err = p.WithAllow("Bash(make:*)", "Bash(npm")
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.ErrorContains(t, err, "Bash(npm")
	assert.Equal(t, Ask, p.Decide(call(ws, "bash", map[string]any{"command": "make"})).Outcome)
}

// ParseSettings says what is wrong with a settings file.
func TestParseSettingsErrors(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{`{`, "not valid JSON"},
		{`[1]`, "not valid JSON"},
		{`{"permissions":{"allow":"Bash"}}`, "not valid JSON"},
		{`{"permissions":{"deny":[1]}}`, "not valid JSON"},
		{`{"permissions":{"deny":["Bash(x"]}}`, "Bash(x"},
		{`{"permissions":{"ask":["Edit(../x)"]}}`, "Edit(../x)"},
		{`{"permissions":{"defaultMode":"yolo"}}`, `"yolo"`},
	} {
		_, err := ParseSettings([]byte(c.in))
		require.Error(t, err, c.in)
		assert.ErrorIs(t, err, harness.CodeInvalidOption, c.in)
		assert.ErrorContains(t, err, c.says, c.in)
	}
	// Keys other than permissions, and null lists, are fine.
	r, err := ParseSettings([]byte(`{"env":{"A":"1"},"permissions":{"allow":null,"defaultMode":"bypassPermissions"}}`))
	require.NoError(t, err)
	assert.Equal(t, Rules{Mode: ModeBypass}, r)
}

// A decision encodes with the field names the session log and the
// events carry.
func TestDecisionJSON(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{Deny: []string{"Bash(rm:*)"}})
	require.NoError(t, err)
	b, err := json.Marshal(p.Decide(call(ws, "bash", map[string]any{"command": "rm -rf x"})))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, "deny", m["outcome"])
	assert.Equal(t, "Bash(rm:*)", m["rule"])
	assert.Equal(t, "deny", m["list"])
	assert.Equal(t, "default", m["mode"])
	assert.Equal(t, "rm -rf x", m["preview"])
	assert.NotEmpty(t, m["reason"])
	assert.NotContains(t, m, "suggest", "empty fields are left out")
}
