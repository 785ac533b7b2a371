package hooks

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

func TestParseSettings(t *testing.T) {
	s, err := ParseSettings([]byte(`{
		"permissions": {"allow": ["Bash(ls)"]},
		"hooks": {
			"PreToolUse": [
				{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh", "timeout": 2.5}]},
				{"matcher": "mcp__github__.*", "hooks": [{"type": "command", "command": "gh.sh"}, {"type": "prompt", "prompt": "is it safe?"}]},
				{"matcher": "Bash(", "hooks": [{"type": "command", "command": "odd.sh"}]}
			],
			"Stop": [{"hooks": [{"command": "stop.sh"}]}],
			"TeammateIdle": [{"hooks": [{"type": "command", "command": "x"}]}]
		}
	}`), "settings.json")
	require.NoError(t, err)
	pre := s.Hooks[PreToolUse]
	require.Len(t, pre, 3)
	assert.Equal(t, Command{Command: "fmt.sh", Timeout: 2500 * time.Millisecond, Source: "settings.json"}, pre[0].Hooks[0])
	assert.Len(t, pre[1].Hooks, 1, "only command hooks run")
	assert.Equal(t, "stop.sh", s.Hooks[Stop][0].Hooks[0].Command)
	require.Len(t, s.Warnings, 3)
	joined := strings.Join(s.Warnings, "\n")
	assert.Contains(t, joined, `hooks.TeammateIdle is not an event this harness runs hooks for`)
	assert.Contains(t, joined, `is of type "prompt"; only command hooks run here`)
	assert.Contains(t, joined, `the matcher "Bash(" is not a valid regular expression`)

	for _, tc := range []struct {
		g     Group
		names []string
		want  bool
	}{
		{pre[0], []string{"Edit", "edit"}, true},
		{pre[0], []string{"Write", "write"}, true},
		{pre[0], []string{"Read", "read"}, false},
		{pre[0], []string{"MultiEdit"}, false},
		{pre[1], []string{"mcp__github__create_issue"}, true},
		{pre[1], []string{"mcp__gitlab__x"}, false},
		{pre[2], []string{"Bash("}, true},
		{pre[2], []string{"Bash"}, false},
		{Group{Matcher: "*"}, []string{"anything"}, true},
		{Group{}, []string{"anything"}, true},
	} {
		g := tc.g
		assert.Equal(t, tc.want, g.match(tc.names...), "%q on %v", tc.g.Matcher, tc.names)
	}

	for _, bad := range []string{
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": ""}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}`,
		`{"hooks": {"Stop": {"hooks": []}}}`,
		`{"hooks": []}`,
		`{"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}`,
	} {
		_, err := ParseSettings([]byte(bad), "bad.json")
		require.Error(t, err, bad)
		assert.ErrorIs(t, err, harness.CodeInvalidOption)
		assert.Contains(t, err.Error(), "hooks: bad.json: ")
	}
	s, err = ParseSettings([]byte(`{"model": "x"}`), "none.json")
	require.NoError(t, err)
	assert.Empty(t, s.Hooks)
}

// FuzzParseSettings feeds arbitrary settings files: parsing never
// panics, errors name the file, and every hook it keeps has a command
// and a positive timeout or none.
func FuzzParseSettings(f *testing.F) {
	for _, s := range []string{
		`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timeout": 30}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"command": "y"}]}], "Nope": []}, "disableAllHooks": false}`,
		`{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "http", "url": "u"}]}]}}`,
		`{"hooks": null}`,
		`{"hooks": {"Stop": [{"hooks": [{"command": "x", "timeout": 1e400}]}]}}`,
		`[1, 2]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSettings(data, "f.json")
		if err != nil {
			if !strings.Contains(err.Error(), "f.json") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		for ev, gs := range s.Hooks {
			for _, g := range gs {
				for _, c := range g.Hooks {
					if strings.TrimSpace(c.Command) == "" || c.Timeout < 0 {
						t.Fatalf("%s: kept %+v", ev, c)
					}
				}
				g.match("Bash", "bash")
			}
		}
	})
}

func TestToolInputAliases(t *testing.T) {
	out, err := fromClaude("grep", []byte(`{"pattern": "x", "-i": true, "-C": 2, "context": 5}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"pattern": "x", "case_insensitive": true, "context": 5}`, string(out), "the tool's own name wins over the alias")
	out, err = fromClaude("task", []byte(`{"subagent_type": "explore", "prompt": "p", "description": "d"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"agent": "explore", "prompt": "p", "description": "d"}`, string(out))
	out, err = fromClaude("bash", []byte(`{"command": "ls", "timeout": 1000, "timeout_ms": 1000}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"command": "ls", "timeout_ms": 1000}`, string(out))
	_, err = fromClaude("bash", []byte(`"a string"`))
	require.Error(t, err)
	_, err = fromClaude("bash", []byte(`null`))
	require.Error(t, err)
}

// FuzzParseOutput feeds arbitrary hook output: it never panics, and
// output that does not start as a JSON object is never an error.
func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{
		`{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "updatedInput": {"command": "x"}}}`,
		`{"decision": "block", "reason": "r", "continue": false, "stopReason": "s"}`,
		`{"a": 1} {"b": 2}`,
		`plain text`,
		`   {`,
		"\xff{",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, looks, err := parseOutput(s)
		if err != nil && !looks {
			t.Fatalf("an error for output that is not JSON: %q", s)
		}
		if o != nil && err != nil {
			t.Fatalf("both a value and an error for %q", s)
		}
		if !strings.HasPrefix(strings.TrimSpace(s), "{") && (o != nil || looks) {
			t.Fatalf("%q read as JSON", s)
		}
	})
}
