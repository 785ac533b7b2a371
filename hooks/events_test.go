package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/hooks"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// recorder is a hook command that appends its input to a file, one
// JSON object a line.
func recorder(t *testing.T) (command string, read func() []map[string]any) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "inputs.jsonl")
	command = "cat >> " + file + "; echo >> " + file
	read = func() []map[string]any {
		data, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		var out []map[string]any
		for line := range strings.SplitSeq(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				var in map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &in), line)
				out = append(out, in)
			}
		}
		return out
	}
	return command, read
}

func events(ins []map[string]any) []string {
	var out []string
	for _, in := range ins {
		out = append(out, in["hook_event_name"].(string))
	}
	return out
}

func every(command string) string {
	cmd, _ := json.Marshal(command)
	var parts []string
	for _, ev := range hooks.Events() {
		parts = append(parts, `"`+string(ev)+`": [{"hooks": [{"type": "command", "command": `+string(cmd)+`}]}]`)
	}
	return `{"hooks": {` + strings.Join(parts, ", ") + `}}`
}

func TestEveryEventFires(t *testing.T) {
	ws := t.TempDir()
	command, read := recorder(t)
	r := settings(t, ws, every(command), hooks.Config{TranscriptPath: func(id string) string { return "/logs/" + id + ".jsonl" }, PermissionMode: "acceptEdits"})
	bash := &bashTool{}
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "task", map[string]any{"agent": "scout", "description": "look", "prompt": "look around"})}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("s1", "bash", map[string]any{"command": "ls"})}}, // the child
		replay.Response{Text: "found it"}, // the child's answer
		replay.Response{Text: "all done"},
	)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	loop, s := newLoop(t, m, r, store, ws, agent.WithTools(bash.tool()),
		agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{Name: "scout", Description: "looks", Tools: []string{"bash"}}}}))
	_, end := run(t, s, "look")
	require.NoError(t, end.Err)
	require.NoError(t, loop.Close())

	ins := read()
	assert.Equal(t, []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "SubagentStart", "PreToolUse", "PostToolUse", "SubagentStop", "PostToolUse", "Stop", "SessionEnd"}, events(ins))
	byEvent := map[string][]map[string]any{}
	for _, in := range ins {
		byEvent[in["hook_event_name"].(string)] = append(byEvent[in["hook_event_name"].(string)], in)
		assert.Equal(t, "acceptEdits", in["permission_mode"])
		assert.Equal(t, ws, in["cwd"])
	}
	assert.Equal(t, "startup", byEvent["SessionStart"][0]["source"])
	assert.Equal(t, "scripted", byEvent["SessionStart"][0]["model"])
	assert.Equal(t, "/logs/"+s.Header().ID+".jsonl", byEvent["SessionStart"][0]["transcript_path"])
	assert.Equal(t, "look", byEvent["UserPromptSubmit"][0]["prompt"])
	assert.Equal(t, "Task", byEvent["PreToolUse"][0]["tool_name"])
	assert.Equal(t, "scout", byEvent["PreToolUse"][0]["tool_input"].(map[string]any)["subagent_type"])
	assert.Equal(t, "scout", byEvent["SubagentStart"][0]["agent_type"])
	assert.Equal(t, "Bash", byEvent["PreToolUse"][1]["tool_name"])
	assert.Equal(t, "scout", byEvent["SubagentStop"][0]["agent_type"])
	assert.Equal(t, false, byEvent["SubagentStop"][0]["stop_hook_active"])
	assert.Equal(t, byEvent["SubagentStart"][0]["agent_id"], byEvent["SubagentStop"][0]["session_id"])
	assert.Equal(t, "ran: ls", byEvent["PostToolUse"][0]["tool_response"].(map[string]any)["output"])
	assert.Equal(t, "all done", byEvent["Stop"][0]["last_assistant_message"])
	assert.Equal(t, "other", byEvent["SessionEnd"][0]["reason"])

	var logged []string
	for _, h := range hookRuns(t, store, s.Header().ID) {
		logged = append(logged, h.Event)
	}
	assert.Equal(t, []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}, logged, "the top session's log has its own runs; the child's are in the child's log")

	// PreCompact, called as the loop calls it before a compaction.
	r.Lifecycle().Compact(context.Background(), agent.CompactInfo{SessionInfo: agent.SessionInfo{SessionID: "s9", Cwd: ws}, Trigger: "auto"})
	last := read()[len(read())-1]
	assert.Equal(t, "PreCompact", last["hook_event_name"])
	assert.Equal(t, "auto", last["trigger"])
}

func TestNotificationAndPermissionRequest(t *testing.T) {
	ws := t.TempDir()
	command, read := recorder(t)
	cmd, _ := json.Marshal(command)
	doc := `{"hooks": {
		"Notification": [{"matcher": "permission_prompt", "hooks": [{"type": "command", "command": ` + string(cmd) + `}]}],
		"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "input=$(cat); case $input in *'rm -rf'*) echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\": {\"behavior\": \"deny\", \"message\": \"never rm -rf\"}}}';; *'git status'*) echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\": {\"behavior\": \"allow\"}}}';; esac"}]}]
	}}`
	r := settings(t, ws, doc, hooks.Config{})
	pol, err := permission.New(permission.Rules{Home: "/home/u"})
	require.NoError(t, err)

	// With a synchronous approver, PermissionRequest hooks answer first.
	bash := &bashTool{}
	var asked []string
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("c1", "bash", map[string]any{"command": "rm -rf /tmp/x"}),
			replay.ToolCall("c2", "bash", map[string]any{"command": "git status"}),
			replay.ToolCall("c3", "bash", map[string]any{"command": "make"}),
		}},
		replay.Response{Text: "ok"},
	)
	_, s := newLoop(t, m, r, session.NewMemory(session.StoreConfig{}), ws, agent.WithTools(bash.tool()), agent.WithPermissions(pol),
		agent.WithApprover(r.Approver(approve(&asked, true))))
	evs, end := run(t, s, "go")
	require.NoError(t, end.Err)
	assert.Equal(t, []string{"git status", "make"}, bash.commands())
	assert.Contains(t, resultOf(evs, "c1").Text(), "never rm -rf")
	assert.Len(t, asked, 1, "only the call no hook answered reached the user")
	ins := read()
	require.Len(t, ins, 1)
	assert.Equal(t, "Notification", ins[0]["hook_event_name"])
	assert.Equal(t, "permission_prompt", ins[0]["notification_type"])
	assert.Equal(t, "The agent needs your permission to use Bash", ins[0]["message"])

	// Without an approver the turn pauses, and Notification hooks run.
	assert.Nil(t, r.Approver(nil))
	m = replay.NewScripted(replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "bash", map[string]any{"command": "make"})}})
	_, s = newLoop(t, m, r, session.NewMemory(session.StoreConfig{}), ws, agent.WithTools(bash.tool()), agent.WithPermissions(pol))
	_, end = run(t, s, "go")
	assert.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	require.Eventually(t, func() bool { return len(read()) == 2 }, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "Notification", read()[1]["hook_event_name"])
}
