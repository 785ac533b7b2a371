package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/storekit"
)

// TestStore runs the conformance suite. newStore must return an empty
// store each time it is called: with its default bound on a log line when
// maxLineSize is 0, and one whose lines are at most maxLineSize bytes when
// it is positive (the stores of this module take session.StoreConfig's
// or postgres.Config's MaxLineSize). A store whose bound cannot be set calls
// t.Skip for a positive maxLineSize, which skips only the checks of a set
// bound.
func TestStore(t *testing.T, newStore func(t *testing.T, maxLineSize int) session.Store) {
	def := func(t *testing.T) session.Store { return newStore(t, 0) }
	t.Run("CreateFillsHeader", func(t *testing.T) { testCreate(t, def(t)) })
	t.Run("AppendLoadRoundTrip", func(t *testing.T) { testRoundTrip(t, def(t)) })
	t.Run("CreateExisting", func(t *testing.T) { testCreateExisting(t, def(t)) })
	t.Run("UnknownAndInvalidIDs", func(t *testing.T) { testUnknownIDs(t, def(t)) })
	t.Run("OpenResumes", func(t *testing.T) { testOpenResumes(t, def(t)) })
	t.Run("SingleWriter", func(t *testing.T) { testSingleWriter(t, def(t)) })
	t.Run("ClosedLog", func(t *testing.T) { testClosed(t, def(t)) })
	t.Run("List", func(t *testing.T) { testList(t, def(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, def(t)) })
	t.Run("ConcurrentAppend", func(t *testing.T) { testConcurrent(t, def(t)) })
	t.Run("UnknownEventType", func(t *testing.T) { testUnknownType(t, def(t)) })
	t.Run("CancelledContext", func(t *testing.T) { testCancelled(t, def(t)) })
	t.Run("DeleteOpen", func(t *testing.T) { testDeleteOpen(t, def(t)) })
	t.Run("Search", func(t *testing.T) { testSearch(t, def(t)) })
	t.Run("Retention", func(t *testing.T) { testRetention(t, def(t)) })
	t.Run("LinesBoundedByDefault", func(t *testing.T) { testDefaultBound(t, def(t)) })
	t.Run("BackslashInWorkspace", func(t *testing.T) { testBackslashWorkspace(t, def(t)) })
	t.Run("Fork", func(t *testing.T) { testFork(t, def(t)) })
	t.Run("ForkOpen", func(t *testing.T) { testForkOpen(t, def(t)) })
	t.Run("RenameAndTag", func(t *testing.T) { testRenameTag(t, def(t)) })
	const max = 4096
	t.Run("LargerEventRefusedWhole", func(t *testing.T) { testRefusedWhole(t, newStore(t, max), max) })
	t.Run("EventAtTheLimit", func(t *testing.T) { testAtTheLimit(t, newStore(t, max), max) })
	t.Run("AnyEventType", func(t *testing.T) { testAnyTypeBounded(t, newStore(t, max), max) })
}

// samplePayloads returns one payload of every type this build writes,
// with the characters that JSON escapes in their text.
func samplePayloads() []session.Payload {
	exit := 0
	return []session.Payload{
		&session.SystemPrompt{Text: "You are terse."},
		&session.UserMessage{Content: []harness.Block{harness.TextBlock("fix \"the\" bug <now>\n\tplease — ünïcode ✓")}},
		&session.ModelRequest{Step: 1, Model: "m", Fingerprint: session.Fingerprint{System: "aa", Tools: "bb", History: "cc", Messages: 1}},
		&session.AssistantMessage{Step: 1, Model: "m", Finish: "tool_calls",
			Usage: &harness.Usage{InputTokens: 10, OutputTokens: 5, CacheHitTokens: 4, CacheMissTokens: 6, ReasoningTokens: 2},
			Content: []harness.Block{
				{Type: harness.BlockReasoning, Text: "think"},
				harness.TextBlock("calling"),
				{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"ls"`}},
			}},
		&session.ToolStarted{Step: 1, CallID: "c1", Name: "bash"},
		&session.ToolRecord{CallID: "c1", Tool: "bash", Name: "env", Data: json.RawMessage(`{"TERM":"dumb"}`)},
		&session.ToolFinished{Step: 1, CallID: "c1", Name: "bash", DurationMS: 12, Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("a\nb"), harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: "sha256:00", MediaType: "image/png", Width: 2, Height: 3, Size: 9}}},
			IsError: true, Code: "exit", Render: &harness.Render{Kind: harness.RenderTerminal,
				Terminal: &harness.Terminal{Command: "ls", Cwd: "/w", Output: "a\nb", ExitCode: &exit, Status: "exited"}},
			Files: []harness.FileAccess{{Op: harness.FileRead, Path: "/w/a", Version: "v1", StartLine: 1, EndLine: 2}},
		}},
		&session.Reminded{Reminder: harness.Reminder{Source: "guard", Text: "you repeat yourself"}},
		&session.ModelRetry{Step: 2, Attempt: 1, Code: "rate_limit", Message: "slow down", DelayMS: 5},
		&session.TurnEnded{Reason: session.ReasonError, Steps: 2, Usage: harness.Usage{InputTokens: 1}, Error: &session.ErrorInfo{Code: "x", Message: "y"}},
	}
}

func ctx() context.Context { return context.Background() }

func testCreate(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{Cwd: "/ws/a"})
	require.NoError(t, err)
	defer log.Close()
	h := log.Header()
	assert.True(t, storekit.ValidID(h.ID), "generated id %q", h.ID)
	assert.Equal(t, storekit.FormatVersion, h.Format)
	assert.Equal(t, "/ws/a", h.Cwd)
	assert.False(t, h.Created.IsZero())

	log2, err := s.Create(ctx(), session.Header{ID: "fixed-id", Cwd: "/w", Parent: h.ID})
	require.NoError(t, err)
	defer log2.Close()
	assert.Equal(t, "fixed-id", log2.Header().ID)
	tr, err := s.Load(ctx(), "fixed-id")
	require.NoError(t, err)
	assert.Equal(t, h.ID, tr.Header.Parent)
	assert.Empty(t, tr.Events)

	_, err = s.Create(ctx(), session.Header{ID: "../escape"})
	assert.ErrorIs(t, err, harness.CodeInvalidID)
}

func testRoundTrip(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	defer log.Close()
	payloads := samplePayloads()
	var written []session.Event
	for i := 0; i < len(payloads); i += 3 {
		evs, err := log.Append(ctx(), payloads[i:min(i+3, len(payloads))]...)
		require.NoError(t, err)
		written = append(written, evs...)
	}
	require.NoError(t, log.Sync())
	tr, err := s.Load(ctx(), log.Header().ID)
	require.NoError(t, err)
	assert.Empty(t, tr.Warnings)
	require.Len(t, tr.Events, len(payloads))
	for i, e := range tr.Events {
		assert.Equal(t, int64(i+1), e.Seq, "contiguous sequence")
		assert.Equal(t, written[i].Seq, e.Seq)
		assert.Equal(t, session.Event{Data: payloads[i]}.Type(), e.Type())
		assert.Equal(t, payloads[i], e.Data, "payload %d round trip", i)
		assert.WithinDuration(t, written[i].Time, e.Time, time.Millisecond)
		if i > 0 {
			assert.False(t, e.Time.Before(tr.Events[i-1].Time), "times never go back")
		}
	}
}

func testCreateExisting(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{ID: "dup"})
	require.NoError(t, err)
	defer log.Close()
	_, err = s.Create(ctx(), session.Header{ID: "dup"})
	assert.ErrorIs(t, err, harness.CodeExists)
}

func testUnknownIDs(t *testing.T, s session.Store) {
	_, err := s.Load(ctx(), "no-such-session")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	_, _, err = s.Open(ctx(), "no-such-session")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.ErrorIs(t, s.Delete(ctx(), "no-such-session"), harness.CodeNotFound)
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "a\x00b"} {
		_, err := s.Load(ctx(), bad)
		assert.Error(t, err, "id %q", bad)
		assert.False(t, errors.Is(err, nil))
	}
}

func testOpenResumes(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	id := log.Header().ID
	_, err = log.Append(ctx(), &session.UserMessage{Content: []harness.Block{harness.TextBlock("one")}}, &session.TurnEnded{Reason: session.ReasonCompleted})
	require.NoError(t, err)
	require.NoError(t, log.Close())

	log2, tr, err := s.Open(ctx(), id)
	require.NoError(t, err)
	defer log2.Close()
	assert.Equal(t, id, log2.Header().ID)
	require.Len(t, tr.Events, 2)
	evs, err := log2.Append(ctx(), &session.UserMessage{Content: []harness.Block{harness.TextBlock("two")}})
	require.NoError(t, err)
	assert.Equal(t, int64(3), evs[0].Seq, "numbering continues after resume")
	tr2, err := s.Load(ctx(), id)
	require.NoError(t, err)
	require.Len(t, tr2.Events, 3)
	assert.Equal(t, "two", tr2.Events[2].Data.(*session.UserMessage).Content[0].Text)
}

func testSingleWriter(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{})
	require.NoError(t, err)
	id := log.Header().ID
	_, _, err = s.Open(ctx(), id)
	assert.ErrorIs(t, err, harness.CodeLocked, "a second writer is refused while the first is open")
	_, err = s.Load(ctx(), id)
	assert.NoError(t, err, "loading works while a writer is open")
	require.NoError(t, log.Close())
	log2, _, err := s.Open(ctx(), id)
	require.NoError(t, err, "open works after the writer closed")
	require.NoError(t, log2.Close())
}

func testClosed(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	require.NoError(t, log.Close(), "Close is idempotent")
	_, err = log.Append(ctx(), &session.Reminded{Reminder: harness.Reminder{Text: "x"}})
	assert.ErrorIs(t, err, harness.CodeClosed)
}

func testList(t *testing.T, s session.Store) {
	mk := func(id, cwd, title string) {
		log, err := s.Create(ctx(), session.Header{ID: id, Cwd: cwd})
		require.NoError(t, err)
		if title != "" {
			_, err = log.Append(ctx(), &session.SystemPrompt{Text: "sys"}, &session.UserMessage{Content: []harness.Block{harness.TextBlock(title + "\nsecond line")}})
			require.NoError(t, err)
		}
		require.NoError(t, log.Close())
		time.Sleep(5 * time.Millisecond) // distinct update times
	}
	mk("s1", "/home/u/proj", "first task")
	mk("s2", "/home/u/proj/sub", "second task")
	mk("s3", "/home/u/project", "sibling with common prefix")
	mk("s4", "/elsewhere", "")

	all, err := s.List(ctx(), session.ListOptions{})
	require.NoError(t, err)
	require.Len(t, all, 4)
	assert.Equal(t, []string{"s4", "s3", "s2", "s1"}, ids(all), "newest first")

	ws, err := s.List(ctx(), session.ListOptions{Workspace: "/home/u/proj"})
	require.NoError(t, err)
	assert.Equal(t, []string{"s2", "s1"}, ids(ws), "same cwd or below, not the sibling /home/u/project")
	assert.Equal(t, "second task", ws[0].Title)
	assert.Equal(t, "/home/u/proj/sub", ws[0].Header.Cwd)
	assert.Positive(t, ws[0].Size)
	assert.False(t, ws[0].Updated.IsZero())

	lim, err := s.List(ctx(), session.ListOptions{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"s4"}, ids(lim))
}

func ids(infos []session.Info) []string {
	out := make([]string, len(infos))
	for i, in := range infos {
		out[i] = in.Header.ID
	}
	return out
}

func testDelete(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{ID: "gone"})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	require.NoError(t, s.Delete(ctx(), "gone"))
	_, err = s.Load(ctx(), "gone")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	list, err := s.List(ctx(), session.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, list)
}

func testConcurrent(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{})
	require.NoError(t, err)
	defer log.Close()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := log.Append(ctx(), &session.Reminded{Reminder: harness.Reminder{Source: fmt.Sprint(w), Text: fmt.Sprint(i)}})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	tr, err := s.Load(ctx(), log.Header().ID)
	require.NoError(t, err)
	require.Len(t, tr.Events, writers*each)
	seen := map[string]bool{}
	for i, e := range tr.Events {
		assert.Equal(t, int64(i+1), e.Seq)
		r := e.Data.(*session.Reminded)
		seen[r.Source+"/"+r.Text] = true
	}
	assert.Len(t, seen, writers*each, "every append present exactly once")
}

func testUnknownType(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{})
	require.NoError(t, err)
	defer log.Close()
	_, err = log.Append(ctx(),
		&session.UserMessage{Content: []harness.Block{harness.TextBlock("hi")}},
		&session.Unknown{Type: "from_the_future", Data: json.RawMessage(`{"x":1}`)},
		&session.TurnEnded{Reason: session.ReasonCompleted})
	require.NoError(t, err)
	tr, err := s.Load(ctx(), log.Header().ID)
	require.NoError(t, err, "an unknown event type never refuses the session")
	require.Len(t, tr.Events, 3)
	u, ok := tr.Events[1].Data.(*session.Unknown)
	require.True(t, ok)
	assert.Equal(t, "from_the_future", u.Type)
	assert.JSONEq(t, `{"x":1}`, string(u.Data))
	require.Len(t, tr.Warnings, 1)
	assert.Contains(t, tr.Warnings[0].Message, "from_the_future")
	h := new(session.History).Add(tr.Events...)
	assert.Equal(t, 1, len(h.Messages()), "history skips the unknown event")
}

func testCancelled(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{})
	require.NoError(t, err)
	defer log.Close()
	c, cancel := context.WithCancel(ctx())
	cancel()
	_, err = log.Append(c, &session.Reminded{Reminder: harness.Reminder{Text: "x"}})
	assert.ErrorIs(t, err, context.Canceled)
	tr, err := s.Load(ctx(), log.Header().ID)
	require.NoError(t, err)
	assert.Empty(t, tr.Events, "nothing appended under a cancelled context")
}
