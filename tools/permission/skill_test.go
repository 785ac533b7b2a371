package permission

import (
	"testing"

	"github.com/go-harness/harness/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSkillRules(t *testing.T) {
	ws := t.TempDir()
	skill := func(name string) map[string]any { return map[string]any{"name": name} }
	for _, tc := range []struct {
		name             string
		allow, ask, deny []string
		skill            string
		want             Outcome
		rule             string
	}{
		{name: "no rule: loading a skill changes nothing", skill: "pdf", want: Allow},
		{name: "deny by name", deny: []string{"Skill(pdf)"}, skill: "pdf", want: Deny, rule: "Skill(pdf)"},
		{name: "deny is by exact name", deny: []string{"Skill(pdf)"}, skill: "pdf-tools", want: Allow},
		{name: "wildcard", deny: []string{"Skill(pdf-*)"}, skill: "pdf-tools", want: Deny, rule: "Skill(pdf-*)"},
		{name: "every skill", ask: []string{"Skill"}, skill: "anything", want: Ask, rule: "Skill"},
		{name: "Skill(*)", ask: []string{"Skill(*)"}, skill: "anything", want: Ask, rule: "Skill(*)"},
		{name: "deny beats allow", allow: []string{"Skill(pdf)"}, deny: []string{"Skill"}, skill: "pdf", want: Deny, rule: "Skill"},
		{name: "ask beats allow", allow: []string{"Skill"}, ask: []string{"Skill(pdf)"}, skill: "pdf", want: Ask, rule: "Skill(pdf)"},
		{name: "the tool's own name", deny: []string{"skill"}, skill: "pdf", want: Deny, rule: "skill"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(Rules{Allow: tc.allow, Ask: tc.ask, Deny: tc.deny, Home: ws})
			require.NoError(t, err)
			d := p.Decide(call(ws, "skill", skill(tc.skill)))
			assert.Equal(t, tc.want, d.Outcome, d.Reason)
			assert.Equal(t, tc.rule, d.Rule)
			if d.Outcome == Ask {
				assert.Equal(t, "Skill("+tc.skill+")", d.Suggest)
			}
		})
	}
	// A Skill rule says nothing about other tools, nor Bash rules about skills.
	p, err := New(Rules{Deny: []string{"Skill", "Bash"}, Home: ws})
	require.NoError(t, err)
	assert.Equal(t, Allow, p.Decide(call(ws, "read", map[string]any{"file_path": "a"})).Outcome)
	assert.Equal(t, Deny, p.Decide(call(ws, "skill", skill("x"))).Outcome)

	for _, bad := range []string{"Skill(a b)", "Skill(x", "Skill(a(b))"} {
		_, err := New(Rules{Deny: []string{bad}, Home: ws})
		assert.Error(t, err, bad)
	}
}

func TestClaudeToolNames(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		rule, tool string
		args       map[string]any
	}{
		{"Grep", "grep", map[string]any{"pattern": "x"}},
		{"Glob", "glob", map[string]any{"pattern": "*.go"}},
		{"Task", "task", map[string]any{"agent": "explore", "prompt": "p"}},
		{"Agent", "task", map[string]any{"agent": "explore", "prompt": "p"}},
		{"WebFetch", "web_fetch", map[string]any{"url": "https://example.com"}},
		{"WebSearch", "web_search", map[string]any{"query": "go"}},
	} {
		p, err := New(Rules{Deny: []string{tc.rule}, Home: ws})
		require.NoError(t, err)
		d := p.Decide(call(ws, tc.tool, tc.args))
		assert.Equal(t, Deny, d.Outcome, "%s names %s", tc.rule, tc.tool)
		assert.Equal(t, tc.rule, d.Rule)
		// A hook matcher written for Claude Code names the tool so
		// (Task, not its other name Agent).
		if tc.rule != "Agent" {
			assert.Equal(t, tc.rule, ClaudeName(tc.tool))
		}
		// The alias matches that tool only.
		assert.NotEqual(t, Deny, p.Decide(call(ws, "echo", nil)).Outcome)
	}
	assert.Equal(t, "Bash", ClaudeName("bash"))
	assert.Equal(t, "Bash", ClaudeName("shell_send"))
	assert.Equal(t, "Read", ClaudeName("read_image"))
	assert.Equal(t, "Task", ClaudeName("task"))
	assert.Equal(t, "mcp__gh__create_issue", ClaudeName("mcp__gh__create_issue"))
}

func TestNarrowing(t *testing.T) {
	ws := t.TempDir()
	n := Narrowing{By: "the skill git-helper", Allow: []string{"Read", "Grep", "Bash(git status:*)", "mcp__gh"}, Exempt: []string{"skill"}}
	for _, tc := range []struct {
		tool string
		args map[string]any
		ok   bool
	}{
		{"read", map[string]any{"file_path": "a.go"}, true},
		{"grep", map[string]any{"pattern": "x"}, true},
		{"bash", map[string]any{"command": "git status --short"}, true},
		{"bash", map[string]any{"command": "git status && rm -rf /"}, false},
		{"bash", map[string]any{"command": "git push"}, false},
		{"write", map[string]any{"file_path": "a.go", "content": ""}, false},
		{"mcp__gh__create_issue", nil, true},
		{"mcp__other__x", nil, false},
		{"skill", map[string]any{"name": "y"}, true},
		{"echo", nil, false},
	} {
		ok, why := n.Permits(call(ws, tc.tool, tc.args))
		assert.Equal(t, tc.ok, ok, "%s %v: %s", tc.tool, tc.args, why)
		if !ok {
			assert.Contains(t, why, "the skill git-helper limits the tools of this turn to Read, Grep, Bash(git status:*), mcp__gh; the "+tc.tool+" call is not among them")
		}
	}
	bad := Narrowing{By: "x", Allow: []string{"Bash(("}}
	ok, why := bad.Permits(call(ws, "read", map[string]any{"file_path": "a"}))
	assert.False(t, ok, "rules that do not parse permit nothing")
	assert.Contains(t, why, "do not parse")
	// allowed-tools written for Claude Code name the web tools so.
	web := Narrowing{By: "the skill research", Allow: []string{"WebFetch", "WebSearch"}}
	for _, c := range []*tools.Call{call(ws, "web_fetch", map[string]any{"url": "https://example.com/a"}), call(ws, "web_search", map[string]any{"query": "go"})} {
		ok, why := web.Permits(c)
		assert.True(t, ok, "%s: %s", c.Name, why)
	}
	ok, _ = web.Permits(call(ws, "bash", map[string]any{"command": "curl example.com"}))
	assert.False(t, ok)
	ok, _ = Narrowing{}.Permits(call(ws, "read", map[string]any{"file_path": "a"}))
	assert.False(t, ok, "an empty narrowing permits nothing")
}
