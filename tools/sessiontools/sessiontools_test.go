package sessiontools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/sessiontools"
)

func user(s string) *session.UserMessage {
	return &session.UserMessage{Content: []harness.Block{harness.TextBlock(s)}}
}

// corpus creates, oldest first:
//
//	old   /home/u/proj       a fixed bug, with a tool call and its result
//	sub   /home/u/proj/sub   mentions the needle
//	sib   /home/u/project    a sibling with a common prefix
//	else  /elsewhere
//	cur   /home/u/proj       the calling session, also mentioning the needle
func corpus(t *testing.T, s session.Store) {
	t.Helper()
	mk := func(id, cwd string, ps ...session.Payload) {
		log, err := s.Create(context.Background(), session.Header{ID: id, Cwd: cwd})
		require.NoError(t, err)
		_, err = log.Append(context.Background(), ps...)
		require.NoError(t, err)
		require.NoError(t, log.Close())
		time.Sleep(5 * time.Millisecond)
	}
	mk("old", "/home/u/proj",
		&session.SystemPrompt{Text: "You are terse."},
		user("CI fails with \"connection reset by peer\"\nplease fix"),
		&session.ModelRequest{Step: 1, Model: "m"},
		&session.AssistantMessage{Step: 1, Content: []harness.Block{
			harness.TextBlock("Looking at the dialer."),
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"grep -rn \"reset by peer\" ."}`}},
		}},
		&session.ToolStarted{Step: 1, CallID: "c1", Name: "bash"},
		&session.ToolFinished{Step: 1, CallID: "c1", Name: "bash", Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("net/dial.go:42: retry on connection reset by peer\n" + strings.Repeat("more output\n", 200))}}},
		&session.AssistantMessage{Step: 2, Content: []harness.Block{harness.TextBlock("Fixed: the dialer now retries.")}},
		&session.TurnEnded{Reason: session.ReasonCompleted, Steps: 2},
	)
	mk("sub", "/home/u/proj/sub", user("the needle is in sub"))
	mk("sib", "/home/u/project", user("the needle is in the sibling"), user("connection reset by peer in sibling"))
	mk("else", "/elsewhere", user("the needle is elsewhere"))
	mk("cur", "/home/u/proj", user("find the needle from before"))
}

func run(t *testing.T, tool tools.Tool, env *tools.Env, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := tool.Execute(context.Background(), &tools.Call{ID: "x", Name: tool.Spec().Name, Arguments: string(raw), Env: env})
	if err != nil {
		return "", err
	}
	require.False(t, res.IsError)
	require.Len(t, res.Content, 1)
	return res.Content[0].Text, nil
}

var curEnv = &tools.Env{SessionID: "cur", Cwd: "/home/u/proj"}

func stores(t *testing.T) map[string]session.Store {
	return map[string]session.Store{"jsonl": session.NewJSONL(t.TempDir(), session.StoreConfig{}), "memory": session.NewMemory(session.StoreConfig{})}
}

func TestSearchWorkspaceAndCurrentSession(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			corpus(t, store)
			search := sessiontools.Search(store, sessiontools.Config{})
			out, err := run(t, search, curEnv, map[string]any{"query": "needle"})
			require.NoError(t, err)
			assert.Contains(t, out, "session sub")
			assert.Contains(t, out, "seq 1 user: the needle is in sub")
			assert.NotContains(t, out, "session cur", "the calling session is left out")
			assert.NotContains(t, out, "sibling", "/home/u/project is not below /home/u/proj")
			assert.NotContains(t, out, "elsewhere")
			assert.Contains(t, out, "1 match for the text \"needle\" in 1 session of /home/u/proj")

			out, err = run(t, search, curEnv, map[string]any{"query": "connection reset by peer"})
			require.NoError(t, err)
			assert.Contains(t, out, "session old — cwd /home/u/proj")
			assert.Contains(t, out, `started with "CI fails with \"connection reset by peer\""`)
			assert.Contains(t, out, "seq 2 user: CI fails with \"connection reset by peer\"\n    please fix", "snippets are decoded text, continuation lines indented")
			assert.Contains(t, out, "seq 6 tool result of bash: net/dial.go:42: retry on connection reset by peer\n    more output")
			assert.NotContains(t, out, "sibling")

			// The arguments the model wrote, decoded.
			out, err = run(t, search, curEnv, map[string]any{"query": `grep -rn "reset by peer"`})
			require.NoError(t, err)
			assert.Contains(t, out, "seq 4 assistant, call to bash:")

			out, err = run(t, search, curEnv, map[string]any{"query": `dial(er|\.go:\d+)`, "regex": true})
			require.NoError(t, err)
			assert.Contains(t, out, "seq 4 assistant: Looking at the dialer.")
			assert.Contains(t, out, "seq 6 tool result of bash")

			out, err = run(t, search, curEnv, map[string]any{"query": "absent text"})
			require.NoError(t, err)
			assert.Equal(t, `No matches for the text "absent text" in earlier sessions of /home/u/proj. The current session is not searched.`, out)

			// A session in a subdirectory searches only below it.
			out, err = run(t, search, &tools.Env{SessionID: "x", Cwd: "/home/u/proj/sub"}, map[string]any{"query": "reset by peer"})
			require.NoError(t, err)
			assert.Contains(t, out, "No matches")
		})
	}
}

func TestSearchAllWorkspacesWhenEnabled(t *testing.T) {
	store := session.NewMemory(session.StoreConfig{})
	corpus(t, store)
	out, err := run(t, sessiontools.Search(store, sessiontools.Config{AllWorkspaces: true}), curEnv, map[string]any{"query": "needle"})
	require.NoError(t, err)
	for _, id := range []string{"sub", "sib", "else"} {
		assert.Contains(t, out, "session "+id+" —")
	}
	assert.NotContains(t, out, "session cur", "the calling session is still left out")
	assert.Less(t, strings.Index(out, "session else"), strings.Index(out, "session sib"), "newest first")
	assert.Less(t, strings.Index(out, "session sib"), strings.Index(out, "session sub"))
	assert.Contains(t, sessiontools.Search(store, sessiontools.Config{AllWorkspaces: true}).Spec().Description, "every workspace")
	assert.Contains(t, sessiontools.Search(store, sessiontools.Config{}).Spec().Description, "of this workspace")
}

func TestSearchLimit(t *testing.T) {
	store := session.NewMemory(session.StoreConfig{})
	for i := range 8 {
		log, err := store.Create(context.Background(), session.Header{ID: fmt.Sprintf("s%d", i), Cwd: "/w"})
		require.NoError(t, err)
		_, err = log.Append(context.Background(), user("needle one"), user("needle two"), user("needle three"))
		require.NoError(t, err)
		require.NoError(t, log.Close())
	}
	env := &tools.Env{SessionID: "cur", Cwd: "/w"}
	out, err := run(t, sessiontools.Search(store, sessiontools.Config{}), env, map[string]any{"query": "needle", "limit": 4})
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(out, "  seq "))
	assert.Contains(t, out, "There are more matches")

	out, err = run(t, sessiontools.Search(store, sessiontools.Config{SearchLimit: 2, MaxSearchLimit: 5, PerSession: 1}), env, map[string]any{"query": "needle"})
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(out, "  seq "), "the default limit")
	assert.Equal(t, 2, strings.Count(out, "\nsession "), "one match per session")
	out, err = run(t, sessiontools.Search(store, sessiontools.Config{SearchLimit: 2, MaxSearchLimit: 5}), env, map[string]any{"query": "needle", "limit": 50})
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(out, "  seq "), "capped at the maximum")
}

func TestSearchErrors(t *testing.T) {
	store := session.NewMemory(session.StoreConfig{})
	corpus(t, store)
	search := sessiontools.Search(store, sessiontools.Config{})
	for _, tc := range []struct {
		env  *tools.Env
		args any
		code harness.Code
		msg  string
	}{
		{curEnv, map[string]any{"query": ""}, harness.CodeInvalidArguments, "The query is empty"},
		{curEnv, map[string]any{"query": "a(", "regex": true}, harness.CodeInvalidArguments, "missing closing )"},
		{curEnv, map[string]any{"query": "x*", "regex": true}, harness.CodeInvalidArguments, "matches empty text"},
		{curEnv, map[string]any{"query": "x", "limit": -1}, harness.CodeInvalidArguments, "limit"},
		{curEnv, map[string]any{"query": "x", "workspace": "/"}, harness.CodeInvalidArguments, "unknown field"},
		{&tools.Env{SessionID: "cur"}, map[string]any{"query": "x"}, sessiontools.CodeNoWorkspace, "no working directory"},
	} {
		_, err := run(t, search, tc.env, tc.args)
		require.Error(t, err, "%v", tc.args)
		assert.Equal(t, tc.code, harness.CodeOf(err), "%v", tc.args)
		assert.Contains(t, err.Error(), tc.msg)
	}
}

func TestRead(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			corpus(t, store)
			read := sessiontools.Read(store, sessiontools.Config{})
			out, err := run(t, read, curEnv, map[string]any{"session_id": "old", "seq": 6, "before": 1, "after": 1})
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(out, "session old — cwd /home/u/proj, created "), out)
			assert.Contains(t, out, "8 events (seq 1 to 8)")
			assert.Contains(t, out, "… 2 earlier events (from seq 1)")
			assert.Contains(t, out, "seq 4 assistant (step 1):\n    Looking at the dialer.\n    → call bash {\"command\":\"grep -rn \\\"reset by peer\\\" .\"}")
			assert.Contains(t, out, "seq 6 ◀ tool result of bash:\n    net/dial.go:42: retry on connection reset by peer\n    more output")
			assert.Equal(t, 200, strings.Count(out, "more output"), "the focus event in full")
			assert.Contains(t, out, "seq 7 assistant (step 2):\n    Fixed: the dialer now retries.")
			assert.NotContains(t, out, "seq 5", "bookkeeping events are not shown")
			assert.Contains(t, out, `… 1 later events; continue with session_read(session_id="old", seq=8, before=0)`)

			// From the start, neighbours summarized.
			out, err = run(t, read, curEnv, map[string]any{"session_id": "old"})
			require.NoError(t, err)
			assert.Contains(t, out, "seq 1 system prompt (14 bytes)")
			assert.Contains(t, out, "seq 2 user:\n    CI fails with \"connection reset by peer\"\n    please fix")
			assert.Contains(t, out, "seq 6 tool result of bash:")
			assert.Contains(t, out, "more bytes)", "long output cut")
			assert.Less(t, strings.Count(out, "more output"), 200)
			assert.Contains(t, out, "seq 8 turn ended (completed, 2 steps)")
			assert.NotContains(t, out, "◀")

			// A bookkeeping seq shows the next shown event.
			out, err = run(t, read, curEnv, map[string]any{"session_id": "old", "seq": 5, "before": 0, "after": 0})
			require.NoError(t, err)
			assert.Contains(t, out, "seq 6 ◀ tool result of bash")

			// Reading a session below the workspace works; the current one too.
			_, err = run(t, read, curEnv, map[string]any{"session_id": "sub"})
			require.NoError(t, err)
			_, err = run(t, read, curEnv, map[string]any{"session_id": "cur"})
			require.NoError(t, err)
		})
	}
}

func TestReadRefusesOtherWorkspaces(t *testing.T) {
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	corpus(t, store)
	read := sessiontools.Read(store, sessiontools.Config{})
	for _, id := range []string{"sib", "else"} {
		_, err := run(t, read, curEnv, map[string]any{"session_id": id})
		require.Error(t, err)
		assert.Equal(t, sessiontools.CodeOutsideWorkspace, harness.CodeOf(err))
		assert.Contains(t, err.Error(), "Session "+id+" belongs to another workspace; session_read reads only sessions of this workspace (/home/u/proj and the directories below it).")
	}
	// From a subdirectory, the parent's sessions are another workspace.
	_, err := run(t, read, &tools.Env{Cwd: "/home/u/proj/sub"}, map[string]any{"session_id": "old"})
	assert.Equal(t, sessiontools.CodeOutsideWorkspace, harness.CodeOf(err))

	out, err := run(t, sessiontools.Read(store, sessiontools.Config{AllWorkspaces: true}), curEnv, map[string]any{"session_id": "sib"})
	require.NoError(t, err, "allowed when the host enables it")
	assert.Contains(t, out, "the needle is in the sibling")

	for _, tc := range []struct {
		args any
		code harness.Code
		msg  string
	}{
		{map[string]any{"session_id": "nope"}, harness.CodeNotFound, "There is no session nope"},
		{map[string]any{"session_id": "../etc/passwd"}, harness.CodeInvalidArguments, "is not a session id"},
		{map[string]any{"session_id": ""}, harness.CodeInvalidArguments, "session_id is empty"},
		{map[string]any{"session_id": "old", "seq": 99}, harness.CodeInvalidArguments, "seq 99 is outside session old, whose events are numbered 1 to 8"},
		{map[string]any{"session_id": "old", "before": -1, "seq": 2}, harness.CodeInvalidArguments, "before must not be negative"},
	} {
		_, err := run(t, read, curEnv, tc.args)
		require.Error(t, err, "%v", tc.args)
		assert.Equal(t, tc.code, harness.CodeOf(err), "%v", tc.args)
		assert.Contains(t, err.Error(), tc.msg)
	}
}

func TestToolsConcurrent(t *testing.T) {
	leakcheck.Check(t)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	corpus(t, store)
	ts := sessiontools.Tools(store, sessiontools.Config{})
	require.Len(t, ts, 2)
	for _, tool := range ts {
		assert.True(t, tool.Spec().ConcurrencySafe)
		assert.False(t, tool.Spec().SideEffects)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if i%2 == 0 {
				out, err := run(t, ts[0], curEnv, map[string]any{"query": "reset by peer"})
				assert.NoError(t, err)
				assert.Contains(t, out, "session old")
			} else {
				out, err := run(t, ts[1], curEnv, map[string]any{"session_id": "old", "seq": 2})
				assert.NoError(t, err)
				assert.Contains(t, out, "seq 2 ◀ user:")
			}
		})
	}
	wg.Wait()
}

// Through the agent loop: the model's search leaves out the session it
// runs in, although that session's own prompt holds the query.
func TestSearchFromTheLoop(t *testing.T) {
	leakcheck.Check(t)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	ctx := context.Background()
	loop, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "noted"})), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	first, err := loop.NewSession(ctx, session.Header{Cwd: "/home/u/proj"})
	require.NoError(t, err)
	for _, err := range first.Run(ctx, "remember the word xylophone-42") {
		require.NoError(t, err)
	}
	require.NoError(t, first.Close())
	require.NoError(t, loop.Close())

	model := replay.NewScripted(
		replay.Call(replay.ToolCall("s1", "session_search", map[string]any{"query": "xylophone-42"})),
		replay.Response{Text: "found it"},
	)
	loop, err = agent.New(agent.WithModel(model), agent.WithStores(agent.Stores{Sessions: store}), agent.WithTools(sessiontools.Tools(store, sessiontools.Config{})...))
	require.NoError(t, err)
	defer loop.Close()
	second, err := loop.NewSession(ctx, session.Header{Cwd: "/home/u/proj"})
	require.NoError(t, err)
	for _, err := range second.Run(ctx, "what was the word with xylophone-42?") {
		require.NoError(t, err)
	}
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Messages
	res := msgs[len(msgs)-1].Content[0].ToolResult
	require.NotNil(t, res)
	text := res.Content[0].Text
	assert.Contains(t, text, "session "+first.Header().ID)
	assert.Contains(t, text, "seq 1 user: remember the word xylophone-42")
	assert.NotContains(t, text, second.Header().ID, "the running session is not a result")
	require.NoError(t, second.Close())
}

func TestOptionsRefuseBadValues(t *testing.T) {
	store := session.NewMemory(session.StoreConfig{})
	for _, tc := range []struct {
		cfg  sessiontools.Config
		want string
	}{
		{sessiontools.Config{SearchLimit: -1}, "SearchLimit:-1"},
		{sessiontools.Config{SearchLimit: 50, MaxSearchLimit: 10}, "must not exceed MaxSearchLimit"},
		{sessiontools.Config{PerSession: -1}, "PerSession:-1"},
	} {
		for _, tool := range sessiontools.Tools(store, tc.cfg) {
			_, err := tools.NewRegistry(tool)
			require.ErrorIs(t, err, harness.CodeInvalidOption, tool.Spec().Name)
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	_, err := tools.NewRegistry(sessiontools.Tools(store, sessiontools.Config{MaxSearchLimit: 10})...)
	assert.NoError(t, err, "the default follows a lower maximum")
}
