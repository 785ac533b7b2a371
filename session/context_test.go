package session_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

func TestContextAndHookEventsRoundTrip(t *testing.T) {
	ctx := context.Background()
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	log, err := store.Create(ctx, session.Header{Cwd: "/w"})
	require.NoError(t, err)
	exit := 2
	prefix := []session.ContextFile{
		{Path: "/w/AGENTS.md", Kind: "instructions", Bytes: 12, Text: "Instructions from /w/AGENTS.md:\n\nuse <tabs> & \"quotes\"", Digest: session.DigestText("Instructions from /w/AGENTS.md:\n\nuse <tabs> & \"quotes\"")},
		{Path: "skills", Kind: "skills", Bytes: 5, Cut: true, Text: "- pdf", Digest: session.DigestText("- pdf")},
	}
	nested := []session.ContextFile{{Path: "/w/pkg/AGENTS.md", Kind: "instructions", Bytes: 3, Text: "pkg", Digest: session.DigestText("pkg")}}
	payloads := []session.Payload{
		&session.ContextLoaded{Files: prefix},
		&session.UserMessage{Content: []harness.Block{harness.TextBlock("hi")}},
		&session.HookRun{Event: "PreToolUse", Matcher: "Bash", Command: "guard.sh", Source: "/w/.harness/settings.json", Tool: "bash", CallID: "c1",
			ExitCode: &exit, Decision: "deny", Reason: "no", UpdatedInput: `{"command":"x"}`, Error: "e", DurationMS: 12},
		&session.HookRun{Event: "Stop", Command: "sleep 9", TimedOut: true, Signal: "SIGKILL", DurationMS: 1000},
		&session.AssistantMessage{Step: 1, Content: []harness.Block{harness.TextBlock("ok")}},
		&session.ContextLoaded{Files: nested, Nested: true, Step: 1},
	}
	_, err = log.Append(ctx, payloads...)
	require.NoError(t, err)
	require.NoError(t, log.Close())
	tr, err := store.Load(ctx, log.Header().ID)
	require.NoError(t, err)
	require.Empty(t, tr.Warnings)
	require.Len(t, tr.Events, len(payloads))
	for i, e := range tr.Events {
		assert.True(t, reflect.DeepEqual(payloads[i], e.Data), "event %d: %#v", i, e.Data)
	}
	assert.Equal(t, "context", tr.Events[0].Type())
	assert.Equal(t, "hook", tr.Events[2].Type())

	h := new(session.History).Add(tr.Events...)
	assert.Equal(t, prefix, h.Context())
	assert.Equal(t, nested, h.Announced())
	msgs := h.Messages()
	require.Len(t, msgs, 3, "the prefix is no message; a nested announcement is")
	assert.Equal(t, "<system-reminder>\npkg\n</system-reminder>", msgs[2].Text())
	assert.Equal(t, "Instructions from /w/AGENTS.md:\n\nuse <tabs> & \"quotes\"\n\n- pdf", session.RenderContext(prefix))

	// A compaction that summarizes the announcement forgets it.
	h.Add(session.Event{Seq: 7, Data: &session.Compacted{Messages: 3, Summary: "s"}})
	assert.Empty(t, h.Announced())
	assert.Equal(t, prefix, h.Context(), "the prefix is never compacted")
}
