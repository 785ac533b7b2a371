package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/hooks"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/permission"
)

// need skips the test when a program the real hooks use is missing.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed; the hook scripts under test need it", p)
		}
	}
}

// script returns the absolute path of a real hook script.
func script(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "claude-hooks", rel))
	require.NoError(t, err)
	return p
}

// settings writes a settings file and returns the runner for it.
func settings(t *testing.T, project string, doc string, cfg hooks.Config) *hooks.Runner {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".harness", "settings.json"), []byte(doc), 0o644))
	cfg.ProjectDir = project
	r, err := hooks.Load(cfg)
	require.NoError(t, err)
	return r
}

// bashTool stands for the shell: it records the commands it was asked
// to run and runs none.
type bashTool struct {
	mu  sync.Mutex
	ran []string
}

func (b *bashTool) tool() tools.Tool {
	type in struct {
		Command   string `json:"command"`
		TimeoutMS int    `json:"timeout_ms,omitempty"`
	}
	return tools.Define(tools.Spec{Name: "bash", Description: "Run a command.", SideEffects: true},
		func(ctx context.Context, call *tools.Call, a in) (*harness.ToolResult, error) {
			b.mu.Lock()
			b.ran = append(b.ran, a.Command)
			b.mu.Unlock()
			return harness.TextResult("ran: " + a.Command), nil
		})
}

func (b *bashTool) commands() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ran...)
}

func run(t *testing.T, s *agent.Session, prompt string) ([]agent.Event, *agent.TurnEnd) {
	t.Helper()
	var evs []agent.Event
	var end *agent.TurnEnd
	for ev := range s.Run(context.Background(), prompt) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.NotNil(t, end)
	return evs, end
}

func resultOf(evs []agent.Event, id string) *harness.ToolResult {
	for _, ev := range evs {
		switch e := ev.(type) {
		case *agent.ToolCallEnd:
			if e.Call.ID == id {
				return e.Result
			}
		case *agent.SubAgentEvent:
			if end, ok := e.Event.(*agent.ToolCallEnd); ok && end.Call.ID == id {
				return end.Result
			}
		}
	}
	return nil
}

// hookRuns returns the hook records of a session's log.
func hookRuns(t *testing.T, store session.Store, id string) []*session.HookRun {
	t.Helper()
	tr, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	var out []*session.HookRun
	for _, e := range tr.Events {
		if h, ok := e.Data.(*session.HookRun); ok {
			out = append(out, h)
		}
	}
	return out
}

func newLoop(t *testing.T, m *replay.Model, r *hooks.Runner, store session.Store, ws string, extra ...agent.Option) (*agent.Loop, *agent.Session) {
	t.Helper()
	fsys, err := fslocal.New(ws)
	require.NoError(t, err)
	opts := append([]agent.Option{agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: store, Files: fsys})}, r.Options()...)
	loop, err := agent.New(append(opts, extra...)...)
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: ws})
	require.NoError(t, err)
	return loop, s
}

// imbue-ai/mng's PreToolUse hook blocks git rebase, on the agent's own
// calls and on a sub-agent's.
func TestRealHookBlocksACommand(t *testing.T) {
	need(t, "jq")
	leakcheck.Check(t)
	ws := t.TempDir()
	r := settings(t, ws, `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "`+script(t, "imbue-ai-mng/claude_prevent_commit_rewrite.sh")+`"}]}]}}`, hooks.Config{})
	bash := &bashTool{}
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("c1", "bash", map[string]any{"command": "git rebase -i HEAD~3"}),
			replay.ToolCall("c2", "bash", map[string]any{"command": "git status"}),
			replay.ToolCall("c3", "read", map[string]any{"file_path": "missing.txt"}),
			replay.ToolCall("c4", "task", map[string]any{"agent": "helper", "description": "amend", "prompt": "amend the last commit"}),
		}},
		// The sub-agent's model calls.
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("s1", "bash", map[string]any{"command": "git commit --amend --no-edit"})}},
		replay.Response{Text: "could not amend"},
		replay.Response{Text: "done"},
	)
	_, s := newLoop(t, m, r, store, ws, agent.WithTools(append(files.Tools(files.Config{}), bash.tool())...),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "helper", Description: "helps", Tools: []string{"bash"}}}}))
	evs, end := run(t, s, "tidy the history")
	require.NoError(t, end.Err)

	assert.Equal(t, []string{"git status"}, bash.commands(), "the blocked commands never ran")
	blocked := resultOf(evs, "c1")
	require.NotNil(t, blocked)
	assert.True(t, blocked.IsError)
	assert.Equal(t, harness.CodeDenied, blocked.Code)
	assert.Contains(t, blocked.Text(), "A PreToolUse hook blocked this bash call; it was not run")
	assert.Contains(t, blocked.Text(), "Blocked: git rebase commands are not allowed", "the hook's standard error reaches the model")
	assert.False(t, resultOf(evs, "c2").IsError)
	assert.Equal(t, harness.CodeNotFound, resultOf(evs, "c3").Code, "other tools pass the hook")
	child := resultOf(evs, "s1")
	require.NotNil(t, child, "the sub-agent's call is in the events")
	assert.Contains(t, child.Text(), "Blocked: git commit with --amend or --fixup is not allowed", "a sub-agent's calls pass the same hooks")

	runs := hookRuns(t, store, s.Header().ID)
	require.GreaterOrEqual(t, len(runs), 4, "every run is logged")
	var first *session.HookRun
	for _, h := range runs {
		if h.CallID == "c1" {
			first = h
		}
	}
	require.NotNil(t, first)
	assert.Equal(t, "PreToolUse", first.Event)
	assert.Equal(t, "bash", first.Tool)
	require.NotNil(t, first.ExitCode)
	assert.Equal(t, 2, *first.ExitCode)
	assert.Equal(t, "deny", first.Decision)
	assert.Equal(t, "Blocked: git rebase commands are not allowed", first.Reason)
	assert.Contains(t, first.Command, "claude_prevent_commit_rewrite.sh")
	assert.Contains(t, first.Source, filepath.Join(".harness", "settings.json"))
}

// rtk-ai/rtk's PreToolUse hook rewrites git status to rtk git status;
// the rewritten call is decided again by the permission policy.
func TestRealHookRewritesInput(t *testing.T) {
	need(t, "jq")
	ws := t.TempDir()
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "rtk"), []byte("#!/bin/sh\necho rtk stand-in\n"), 0o755))
	doc := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + script(t, "rtk-ai-rtk/rtk-rewrite.sh") + `"}]}]}}`
	r := settings(t, ws, doc, hooks.Config{Env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}})

	for _, tc := range []struct {
		name   string
		rules  permission.Rules
		ran    []string
		denial string
	}{
		{"allowed", permission.Rules{Allow: []string{"Bash(git status)", "Bash(rtk git status)"}}, []string{"rtk git status"}, ""},
		{"the rewrite is denied", permission.Rules{Allow: []string{"Bash(git status)"}, Deny: []string{"Bash(rtk:*)"}}, nil, "denied by the rule Bash(rtk:*)"},
		{"the rewrite needs approval", permission.Rules{Allow: []string{"Bash(git status)"}}, nil, "cannot wait for an answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rules.Home = "/home/u"
			pol, err := permission.New(tc.rules)
			require.NoError(t, err)
			bash := &bashTool{}
			store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
			m := replay.NewScripted(
				replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "bash", map[string]any{"command": "git status", "timeout_ms": 5000})}},
				replay.Response{Text: "ok"},
			)
			_, s := newLoop(t, m, r, store, ws, agent.WithTools(bash.tool()), agent.WithPermissions(pol))
			evs, end := run(t, s, "status?")
			require.NoError(t, end.Err)
			assert.Equal(t, tc.ran, bash.commands())
			res := resultOf(evs, "c1")
			require.NotNil(t, res)
			if tc.denial == "" {
				assert.Equal(t, "ran: rtk git status", res.Text())
			} else {
				assert.Equal(t, harness.CodeDenied, res.Code)
				assert.Contains(t, res.Text(), "Its input was changed before it ran")
				assert.Contains(t, res.Text(), tc.denial)
			}
			var run *session.HookRun
			for _, h := range hookRuns(t, store, s.Header().ID) {
				run = h
			}
			require.NotNil(t, run)
			assert.Equal(t, "allow+update", run.Decision)
			tr, err := store.Load(context.Background(), s.Header().ID)
			require.NoError(t, err)
			var decisions []string
			for _, e := range tr.Events {
				if d, ok := e.Data.(*session.PermissionDecided); ok {
					decisions = append(decisions, d.Outcome+": "+d.Reason)
				}
			}
			require.Len(t, decisions, 2, "the model's call and the rewritten one are both decided and logged")
			assert.Contains(t, decisions[0], "git status")
			assert.Contains(t, decisions[1], "rtk git status")
		})
	}
}

// mraza007/echovault's UserPromptSubmit hook adds context after the
// user's message.
func TestRealHookAddsContextAfterThePrompt(t *testing.T) {
	ws := t.TempDir()
	r := settings(t, ws, `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "bash `+script(t, "mraza007-echovault/echovault-prompt-context.sh")+`"}]}]}}`, hooks.Config{})
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	m := replay.NewScripted(replay.Response{Text: "hello"})
	_, s := newLoop(t, m, r, store, ws)
	_, end := run(t, s, "what did we decide yesterday?")
	require.NoError(t, end.Err)
	msgs := m.Requests()[0].Messages
	require.Len(t, msgs, 2)
	assert.Equal(t, "what did we decide yesterday?", msgs[0].Text())
	assert.True(t, strings.HasPrefix(msgs[1].Text(), "<system-reminder>\nIMPORTANT: Before ending any session, you MUST save meaningful learnings to EchoVault"), msgs[1].Text())
	runs := hookRuns(t, store, s.Header().ID)
	require.Len(t, runs, 1)
	assert.Equal(t, "UserPromptSubmit", runs[0].Event)
	assert.Equal(t, "context", runs[0].Decision)
}

// imbue-ai/mng's Stop hook keeps the agent going while the working tree
// has uncommitted changes.
func TestRealStopHookKeepsTheTurnGoing(t *testing.T) {
	need(t, "git")
	ws := t.TempDir()
	gitRun := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	gitRun("init", "-q")
	gitRun("commit", "-q", "--allow-empty", "-m", "start")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("new\n"), 0o644))
	inputs := filepath.Join(t.TempDir(), "stop-inputs.jsonl")
	doc := `{"hooks": {"Stop": [{"hooks": [
		{"type": "command", "command": "` + script(t, "imbue-ai-mng/check_commit_status.sh") + `"},
		{"type": "command", "command": "cat >> ` + inputs + `; echo >> ` + inputs + `"}
	]}]}}`
	r := settings(t, ws, doc, hooks.Config{Env: []string{"CLAUDE_FORCE_COMMIT=1"}})
	commit := tools.Define(tools.Spec{Name: "commit", Description: "Commit everything.", SideEffects: true},
		func(ctx context.Context, call *tools.Call, _ struct{}) (*harness.ToolResult, error) {
			gitRun("add", "-A")
			gitRun("commit", "-q", "-m", "notes")
			return harness.TextResult("committed"), nil
		})
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	m := replay.NewScripted(
		replay.Response{Text: "I wrote the notes."},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "commit", map[string]any{})}},
		replay.Response{Text: "Committed the notes."},
	)
	_, s := newLoop(t, m, r, store, ws, agent.WithTools(commit))
	evs, end := run(t, s, "write notes")
	require.NoError(t, end.Err)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	require.Len(t, m.Requests(), 3, "the Stop hook made the model answer again")
	last := m.Requests()[1].Messages
	reminder := last[len(last)-1].Text()
	assert.Contains(t, reminder, "A Stop hook kept this turn going: ERROR: Cannot stop - uncommitted changes detected!")
	assert.Contains(t, reminder, "notes.txt", "the hook's standard error reaches the model")
	var added int
	for _, ev := range evs {
		if ra, ok := ev.(*agent.ReminderAdded); ok && ra.Reminder.Source == "stop_hook" {
			added++
		}
	}
	assert.Equal(t, 1, added)

	data, err := os.ReadFile(inputs)
	require.NoError(t, err)
	var seen []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var in map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &in), line)
		seen = append(seen, in)
	}
	require.Len(t, seen, 2)
	assert.Equal(t, false, seen[0]["stop_hook_active"])
	assert.Equal(t, true, seen[1]["stop_hook_active"], "the second stop knows a hook kept the turn going")
	assert.Equal(t, "Stop", seen[0]["hook_event_name"])
	assert.Equal(t, s.Header().ID, seen[0]["session_id"])
	assert.Equal(t, ws, seen[0]["cwd"])
	assert.Equal(t, "I wrote the notes.", seen[0]["last_assistant_message"])
}
