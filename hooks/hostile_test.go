package hooks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/hooks"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
)

// hookDoc is a settings file running command for event on every tool.
func hookDoc(event, command string, timeout int) string {
	cmd, _ := json.Marshal(command)
	t := ""
	if timeout > 0 {
		t = `, "timeout": ` + strconv.Itoa(timeout)
	}
	return `{"hooks": {"` + event + `": [{"matcher": "*", "hooks": [{"type": "command", "command": ` + string(cmd) + t + `}]}]}}`
}

// hostileTurn runs one turn whose single bash call passes the hook, and
// returns the call's result, the log's hook records and how long the
// turn took.
func hostileTurn(t *testing.T, event, command string, timeout int) (*harness.ToolResult, []*session.HookRun, time.Duration, *bashTool) {
	t.Helper()
	ws := t.TempDir()
	r := settings(t, ws, hookDoc(event, command, timeout), hooks.Config{MaxOutput: 4096})
	bash := &bashTool{}
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "bash", map[string]any{"command": "make"})}},
		replay.Response{Text: "done"},
	)
	_, s := newLoop(t, m, r, store, ws, agent.WithTools(bash.tool()))
	start := time.Now()
	evs, end := run(t, s, "build")
	took := time.Since(start)
	require.NoError(t, end.Err)
	assert.Equal(t, session.ReasonCompleted, end.Reason, "the turn is never wedged")
	return resultOf(evs, "c1"), hookRuns(t, store, s.Header().ID), took, bash
}

func TestHostileHooks(t *testing.T) {
	leakcheck.Check(t)
	t.Run("hang", func(t *testing.T) {
		res, runs, took, bash := hostileTurn(t, "PreToolUse", "sleep 600", 1)
		assert.Equal(t, []string{"make"}, bash.commands(), "a hook that times out does not block (as in Claude Code)")
		assert.False(t, res.IsError)
		require.Len(t, runs, 1)
		assert.True(t, runs[0].TimedOut)
		assert.Nil(t, runs[0].ExitCode)
		assert.Contains(t, runs[0].Error, "ran longer than its timeout of 1s and was stopped")
		assert.Less(t, took, 20*time.Second)
	})
	t.Run("hang with a child holding the pipes", func(t *testing.T) {
		_, runs, took, _ := hostileTurn(t, "PostToolUse", "(sleep 600 &) ; sleep 600", 1)
		require.Len(t, runs, 1)
		assert.True(t, runs[0].TimedOut)
		assert.Less(t, took, 20*time.Second)
	})
	t.Run("a daemon left behind", func(t *testing.T) {
		_, runs, took, _ := hostileTurn(t, "PreToolUse", "nohup sleep 600 >/dev/null 2>&1 & exit 0", 0)
		require.Len(t, runs, 1)
		require.NotNil(t, runs[0].ExitCode)
		assert.Equal(t, 0, *runs[0].ExitCode)
		assert.Less(t, took, 20*time.Second)
	})
	t.Run("flood", func(t *testing.T) {
		res, runs, took, bash := hostileTurn(t, "PreToolUse", "yes 'flood flood flood'", 30)
		require.Len(t, runs, 1)
		assert.Contains(t, runs[0].Error, "wrote far more output than hooks may, and was stopped")
		assert.Less(t, took, 20*time.Second, "stopped by its output, long before its timeout")
		assert.Equal(t, []string{"make"}, bash.commands())
		assert.False(t, res.IsError)
	})
	t.Run("flood on stderr, then exit 2", func(t *testing.T) {
		res, runs, _, bash := hostileTurn(t, "PreToolUse", "head -c 20000 /dev/zero | tr '\\0' x >&2; exit 2", 0)
		require.Len(t, runs, 1)
		assert.Empty(t, bash.commands())
		assert.Less(t, len(res.Text()), 6000, "what reaches the model is bounded")
		assert.Contains(t, runs[0].Error, "its output was cut")
	})
	t.Run("exit 137", func(t *testing.T) {
		res, runs, _, bash := hostileTurn(t, "PreToolUse", "echo killed >&2; exit 137", 0)
		assert.Equal(t, []string{"make"}, bash.commands(), "an exit status other than 2 does not block")
		assert.False(t, res.IsError)
		require.Len(t, runs, 1)
		require.NotNil(t, runs[0].ExitCode)
		assert.Equal(t, 137, *runs[0].ExitCode)
		assert.Empty(t, runs[0].Decision)
	})
	t.Run("killed by a signal", func(t *testing.T) {
		_, runs, _, bash := hostileTurn(t, "PreToolUse", "kill -9 $$", 0)
		assert.Equal(t, []string{"make"}, bash.commands())
		require.Len(t, runs, 1)
		assert.Nil(t, runs[0].ExitCode)
		assert.Equal(t, "SIGKILL", runs[0].Signal)
		assert.Contains(t, runs[0].Error, "killed by SIGKILL")
	})
	t.Run("invalid JSON blocks a PreToolUse", func(t *testing.T) {
		res, runs, _, bash := hostileTurn(t, "PreToolUse", `echo '{"hookSpecificOutput": {"permissionDecision": "deny"'`, 0)
		assert.Empty(t, bash.commands(), "a decision that cannot be read does not let the call run")
		assert.Equal(t, harness.CodeDenied, res.Code)
		assert.Contains(t, res.Text(), "output could not be read")
		require.Len(t, runs, 1)
		assert.Contains(t, runs[0].Error, "its output is not valid JSON")
	})
	t.Run("invalid JSON after a call is reported", func(t *testing.T) {
		res, runs, _, bash := hostileTurn(t, "PostToolUse", `echo '{"decision": "block", "reason": '`, 0)
		assert.Equal(t, []string{"make"}, bash.commands())
		assert.Equal(t, "ran: make", res.Text())
		require.Len(t, runs, 1)
		assert.Contains(t, runs[0].Error, "not valid JSON")
	})
	t.Run("a missing program", func(t *testing.T) {
		res, runs, _, bash := hostileTurn(t, "PreToolUse", "/no/such/hook", 0)
		assert.Equal(t, []string{"make"}, bash.commands())
		assert.False(t, res.IsError)
		require.Len(t, runs, 1)
		require.NotNil(t, runs[0].ExitCode)
		assert.Equal(t, 127, *runs[0].ExitCode)
	})
	t.Run("binary output", func(t *testing.T) {
		_, runs, _, bash := hostileTurn(t, "PostToolUse", `printf '\xff\xfe\x00{'`, 0)
		assert.Equal(t, []string{"make"}, bash.commands())
		require.Len(t, runs, 1)
	})
}

func TestHooksGetNoHostSecrets(t *testing.T) {
	t.Setenv("HARNESS_TEST_API_KEY", "s3cr3t")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t")
	t.Setenv("HARNESS_PASSED", "passed")
	ws := t.TempDir()
	out := filepath.Join(t.TempDir(), "env.txt")
	r := settings(t, ws, hookDoc("UserPromptSubmit", "env > "+out, 0), hooks.Config{PassEnv: []string{"HARNESS_PASSED"}, Env: []string{"EXTRA=1"}})
	m := replay.NewScripted(replay.Response{Text: "hi"})
	_, s := newLoop(t, m, r, session.NewMemory(session.StoreConfig{}), ws)
	_, end := run(t, s, "hello")
	require.NoError(t, end.Err)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	env := string(data)
	assert.NotContains(t, env, "s3cr3t")
	assert.Contains(t, env, "HARNESS_PASSED=passed")
	assert.Contains(t, env, "EXTRA=1")
	assert.Contains(t, env, "CLAUDE_PROJECT_DIR="+ws)
	assert.Contains(t, env, "TERM=dumb")
	assert.Contains(t, env, "PATH=")
}

// A hook's context written to plain stdout (UserPromptSubmit), a
// refused prompt, a SessionStart that adds context once, and the tool
// input fields Claude Code's hooks read.
func TestProtocol(t *testing.T) {
	ws := t.TempDir()
	inputs := filepath.Join(t.TempDir(), "inputs.jsonl")
	log := "cat >> " + inputs + "; echo >> " + inputs
	doc := `{"hooks": {
		"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo started on branch main"}]}],
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "if grep -q secret; then echo 'no secrets in prompts' >&2; exit 2; fi; echo the time is noon"}]}],
		"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "` + log + `"}]},
			{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + log + `"}]},
			{"matcher": "mcp__github__.*", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"no GitHub today\"}}'"}]}],
		"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"formatted the file\"}}'"}]}],
		"PostToolUseFailure": [{"hooks": [{"type": "command", "command": "` + log + `"}]}]
	}}`
	r := settings(t, ws, doc, hooks.Config{})
	bash := &bashTool{}
	gh := toolNamed("mcp__github__create_issue")
	fail := failingTool()
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("c1", "write", map[string]any{"file_path": "a.txt", "content": "A"}),
			replay.ToolCall("c2", "bash", map[string]any{"command": "ls", "timeout_ms": 1000}),
			replay.ToolCall("c3", "mcp__github__create_issue", map[string]any{"title": "x"}),
			replay.ToolCall("c4", "fails", map[string]any{}),
		}},
		replay.Response{Text: "done"},
		replay.Response{Text: "second turn"},
	)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	_, s := newLoop(t, m, r, store, ws, agent.WithTools(writeTool(), bash.tool(), gh, fail))
	evs, end := run(t, s, "write a.txt")
	require.NoError(t, end.Err)
	first := m.Requests()[0].Messages
	require.Len(t, first, 3)
	assert.Equal(t, "<system-reminder>\nstarted on branch main\n</system-reminder>", first[0].Text(), "SessionStart's stdout comes before the first message")
	assert.Equal(t, "write a.txt", first[1].Text())
	assert.Equal(t, "<system-reminder>\nthe time is noon\n</system-reminder>", first[2].Text(), "UserPromptSubmit's stdout comes after it")
	assert.Contains(t, resultOf(evs, "c1").Text(), "[PostToolUse hook] formatted the file")
	denied := resultOf(evs, "c3")
	assert.Equal(t, harness.CodeDenied, denied.Code)
	assert.Contains(t, denied.Text(), "no GitHub today")

	data, err := os.ReadFile(inputs)
	require.NoError(t, err)
	var ins []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			var in map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &in))
			ins = append(ins, in)
		}
	}
	require.Len(t, ins, 3)
	byTool := map[string]map[string]any{}
	for _, in := range ins {
		byTool[in["hook_event_name"].(string)+":"+in["tool_name"].(string)] = in
	}
	write := byTool["PreToolUse:Write"]
	require.NotNil(t, write, "%v", ins)
	assert.Equal(t, map[string]any{"file_path": filepath.Join(ws, "a.txt"), "content": "A"}, write["tool_input"], "file_path is absolute, as Claude Code's")
	assert.Equal(t, "c1", write["tool_use_id"])
	assert.Equal(t, s.Header().ID, write["session_id"])
	assert.Equal(t, "default", write["permission_mode"])
	assert.Equal(t, ws, write["cwd"])
	b := byTool["PreToolUse:Bash"]
	require.NotNil(t, b)
	assert.Equal(t, map[string]any{"command": "ls", "timeout_ms": 1000.0, "timeout": 1000.0}, b["tool_input"], "Claude Code's name for the timeout too")
	f := byTool["PostToolUseFailure:fails"]
	require.NotNil(t, f)
	assert.Equal(t, "it broke", f["error"])
	assert.Equal(t, false, f["is_interrupt"])

	// SessionStart runs once per session; a refused prompt is not sent.
	evs, end = run(t, s, "here is my secret")
	assert.Equal(t, agent.ReasonBlocked, end.Reason)
	require.Error(t, end.Err)
	assert.ErrorIs(t, end.Err, harness.Code("prompt_blocked"))
	assert.Contains(t, end.Err.Error(), "no secrets in prompts")
	assert.Len(t, m.Requests(), 2, "the model was not called")
	_, end = run(t, s, "fine now")
	require.NoError(t, end.Err)
	last := m.Requests()[2].Messages
	for _, msg := range last {
		assert.NotContains(t, msg.Text(), "secret", "the refused prompt is in no request")
	}
	assert.Equal(t, 1, strings.Count(everything(last), "started on branch main"))
}

func everything(msgs []harness.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text())
		b.WriteString("\n")
	}
	return b.String()
}

// A PreToolUse hook that asks goes to the approver; without one the call
// is denied.
func TestAskGoesToTheApprover(t *testing.T) {
	ws := t.TempDir()
	doc := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"ask\", \"permissionDecisionReason\": \"this touches production\"}}'"}]}]}}`
	r := settings(t, ws, doc, hooks.Config{})
	for _, allow := range []bool{true, false} {
		bash := &bashTool{}
		var asked []string
		m := replay.NewScripted(
			replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "bash", map[string]any{"command": "deploy"})}},
			replay.Response{Text: "ok"},
		)
		_, s := newLoop(t, m, r, session.NewMemory(session.StoreConfig{}), ws, agent.WithTools(bash.tool()), agent.WithApprover(approve(&asked, allow)))
		evs, end := run(t, s, "deploy")
		require.NoError(t, end.Err)
		assert.Equal(t, []string{"a PreToolUse hook asks: this touches production"}, asked)
		if allow {
			assert.Equal(t, []string{"deploy"}, bash.commands())
		} else {
			assert.Empty(t, bash.commands())
			assert.Equal(t, harness.CodeDenied, resultOf(evs, "c1").Code)
		}
	}
	bash := &bashTool{}
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "bash", map[string]any{"command": "deploy"})}},
		replay.Response{Text: "ok"},
	)
	_, s := newLoop(t, m, r, session.NewMemory(session.StoreConfig{}), ws, agent.WithTools(bash.tool()))
	evs, _ := run(t, s, "deploy")
	assert.Empty(t, bash.commands())
	assert.Contains(t, resultOf(evs, "c1").Text(), "no approver to ask while a call runs")
}

func TestSettingsFilesAndDisabling(t *testing.T) {
	ws := t.TempDir()
	home := t.TempDir()
	write := func(p, doc string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(doc), 0o644))
	}
	write(filepath.Join(ws, ".harness", "settings.json"), hookDoc("Stop", "echo harness", 0))
	write(filepath.Join(ws, ".claude", "settings.json"), hookDoc("Stop", "echo claude project", 0))
	write(filepath.Join(ws, ".claude", "settings.local.json"), hookDoc("Stop", "echo claude local", 0))
	write(filepath.Join(home, ".claude", "settings.json"), hookDoc("Stop", "echo claude user", 0))
	commands := func(r *hooks.Runner) []string {
		var out []string
		for _, g := range r.Settings().Hooks[hooks.Stop] {
			for _, c := range g.Hooks {
				out = append(out, c.Command)
			}
		}
		return out
	}
	r, err := hooks.Load(hooks.Config{ProjectDir: ws, Home: home})
	require.NoError(t, err)
	assert.Equal(t, []string{"echo harness"}, commands(r), "Claude Code's files only when the host turns the compatibility on")
	r, err = hooks.Load(hooks.Config{ProjectDir: ws, Home: home, Claude: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"echo harness", "echo claude project", "echo claude local", "echo claude user"}, commands(r))
	assert.Equal(t, 4, r.Count())
	write(filepath.Join(ws, ".claude", "settings.local.json"), `{"disableAllHooks": true}`)
	r, err = hooks.Load(hooks.Config{ProjectDir: ws, Home: home, Claude: true})
	require.NoError(t, err)
	assert.Equal(t, 0, r.Count())
	write(filepath.Join(ws, ".harness", "settings.json"), `{"hooks": {"Stop": [{"hooks": [{"command": ""}]}]}}`)
	_, err = hooks.Load(hooks.Config{ProjectDir: ws})
	require.Error(t, err)
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.Contains(t, err.Error(), filepath.Join(ws, ".harness", "settings.json"))
}
