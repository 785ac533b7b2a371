package sessiontest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

func userMsg(text string) *session.UserMessage {
	return &session.UserMessage{Content: []harness.Block{harness.TextBlock(text)}}
}

// forkParent makes a session of two turns with a checkpoint before
// each, closed, and returns its id and events.
func forkParent(t *testing.T, s session.Store) (string, []session.Event) {
	t.Helper()
	log, err := s.Create(ctx(), session.Header{Cwd: "/w/proj"})
	require.NoError(t, err)
	cp := func(turn int) *session.Checkpoint {
		return &session.Checkpoint{Kind: session.CheckpointTurnStart, Turn: turn, Dir: "/w/proj", Manifest: "sha256:" + strings.Repeat("ab", 32), Files: 2}
	}
	var all []session.Event
	for _, batch := range [][]session.Payload{
		{cp(0)},
		{userMsg("first turn")},
		{&session.AssistantMessage{Step: 1, Model: "m", Content: []harness.Block{harness.TextBlock("one")}, Finish: "stop"}},
		{&session.TurnEnded{Reason: session.ReasonCompleted, Steps: 1}},
		{cp(1)},
		{userMsg("second turn")},
		{&session.AssistantMessage{Step: 1, Model: "m", Content: []harness.Block{harness.TextBlock("two")}, Finish: "stop"}},
		{&session.TurnEnded{Reason: session.ReasonCompleted, Steps: 1}},
	} {
		evs, err := log.Append(ctx(), batch...)
		require.NoError(t, err)
		all = append(all, evs...)
		time.Sleep(time.Millisecond)
	}
	id := log.Header().ID
	require.NoError(t, log.Close())
	return id, all
}

func testFork(t *testing.T, s session.Store) {
	parent, events := forkParent(t, s)
	before, err := s.Load(ctx(), parent)
	require.NoError(t, err)

	// Before the second turn: the checkpoint event at seq 5.
	h, err := s.Fork(ctx(), parent, session.ForkOptions{At: 5})
	require.NoError(t, err)
	assert.NotEqual(t, parent, h.ID)
	assert.Equal(t, parent, h.Parent)
	assert.Equal(t, int64(5), h.ForkSeq)
	assert.Equal(t, "/w/proj", h.Cwd)
	tr, err := s.Load(ctx(), h.ID)
	require.NoError(t, err)
	assert.Empty(t, tr.Warnings)
	assert.Equal(t, h, tr.Header, "the header reads back")
	require.Len(t, tr.Events, 5)
	for i, e := range tr.Events {
		assert.Equal(t, events[i].Seq, e.Seq, "sequence numbers are kept")
		assert.True(t, events[i].Time.Equal(e.Time), "times are kept")
		assert.Equal(t, events[i].Data, e.Data)
	}
	after, err := s.Load(ctx(), parent)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the parent is left as it was")

	// The fork resumes: appending continues after the fork point, and the
	// parent does not see it.
	log, tr2, err := s.Open(ctx(), h.ID)
	require.NoError(t, err)
	require.Len(t, tr2.Events, 5)
	evs, err := log.Append(ctx(), userMsg("another second turn"))
	require.NoError(t, err)
	assert.Equal(t, int64(6), evs[0].Seq)
	require.NoError(t, log.Close())
	after, err = s.Load(ctx(), parent)
	require.NoError(t, err)
	assert.Equal(t, "second turn", after.Events[5].Data.(*session.UserMessage).Content[0].Text)

	infos, err := s.List(ctx(), session.ListOptions{Workspace: "/w"})
	require.NoError(t, err)
	titles := map[string]string{}
	for _, in := range infos {
		titles[in.Header.ID] = in.Title
		if in.Header.ID == h.ID {
			assert.Equal(t, parent, in.Header.Parent, "List shows the parent")
			assert.Equal(t, int64(5), in.Header.ForkSeq)
		}
	}
	assert.Equal(t, "first turn", titles[h.ID], "a fork's title is its first user message too")

	// Everything, with a chosen id; a fork before any user message.
	all, err := s.Fork(ctx(), parent, session.ForkOptions{ID: "whole-copy"})
	require.NoError(t, err)
	assert.Equal(t, "whole-copy", all.ID)
	assert.Equal(t, int64(8), all.ForkSeq)
	tr, err = s.Load(ctx(), "whole-copy")
	require.NoError(t, err)
	assert.Len(t, tr.Events, 8)
	first, err := s.Fork(ctx(), parent, session.ForkOptions{At: 1})
	require.NoError(t, err)
	infos, err = s.List(ctx(), session.ListOptions{})
	require.NoError(t, err)
	for _, in := range infos {
		if in.Header.ID == first.ID {
			assert.Empty(t, in.Title, "no user message was copied")
		}
	}

	// A fork of a fork.
	again, err := s.Fork(ctx(), h.ID, session.ForkOptions{At: 6})
	require.NoError(t, err)
	tr, err = s.Load(ctx(), again.ID)
	require.NoError(t, err)
	require.Len(t, tr.Events, 6)
	assert.Equal(t, "another second turn", tr.Events[5].Data.(*session.UserMessage).Content[0].Text)

	// Errors.
	_, err = s.Fork(ctx(), parent, session.ForkOptions{At: 99})
	assert.ErrorIs(t, err, harness.CodeNotFound)
	_, err = s.Fork(ctx(), "no-such-session", session.ForkOptions{})
	assert.ErrorIs(t, err, harness.CodeNotFound)
	_, err = s.Fork(ctx(), parent, session.ForkOptions{ID: "whole-copy"})
	assert.ErrorIs(t, err, harness.CodeExists)
	_, err = s.Fork(ctx(), parent, session.ForkOptions{ID: "../x"})
	assert.ErrorIs(t, err, harness.CodeInvalidID)
	_, err = s.Fork(ctx(), "../x", session.ForkOptions{})
	assert.ErrorIs(t, err, harness.CodeInvalidID)
}

func testForkOpen(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	defer log.Close()
	_, err = log.Append(ctx(), userMsg("a"), &session.TurnEnded{Reason: session.ReasonCompleted})
	require.NoError(t, err)
	h, err := s.Fork(ctx(), log.Header().ID, session.ForkOptions{At: 1})
	require.NoError(t, err, "a session open for appending can be forked")
	_, err = log.Append(ctx(), userMsg("b"))
	require.NoError(t, err, "and its writer goes on")
	tr, err := s.Load(ctx(), h.ID)
	require.NoError(t, err)
	assert.Len(t, tr.Events, 1)
}

func tagsOf(t *testing.T, s session.Store, id string) (string, []string) {
	t.Helper()
	infos, err := s.List(ctx(), session.ListOptions{})
	require.NoError(t, err)
	for _, in := range infos {
		if in.Header.ID == id {
			return in.Title, in.Tags
		}
	}
	t.Fatalf("session %s is not listed", id)
	return "", nil
}

func testRenameTag(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{ID: "meta", Cwd: "/w"})
	require.NoError(t, err)
	_, err = log.Append(ctx(), userMsg("fix the flaky test in ci"))
	require.NoError(t, err)
	before, err := s.Load(ctx(), "meta")
	require.NoError(t, err)

	// While open for appending.
	require.NoError(t, s.Rename(ctx(), "meta", "  Flaky CI test  "))
	title, tags := tagsOf(t, s, "meta")
	assert.Equal(t, "Flaky CI test", title, "trimmed")
	assert.Empty(t, tags)
	got, err := s.Tag(ctx(), "meta", []string{"ci", "bug", "ci"}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"bug", "ci"}, got, "sorted, each once")
	got, err = s.Tag(ctx(), "meta", []string{"p1"}, []string{"bug", "absent"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ci", "p1"}, got)
	_, tags = tagsOf(t, s, "meta")
	assert.Equal(t, []string{"ci", "p1"}, tags)
	_, err = log.Append(ctx(), &session.TurnEnded{Reason: session.ReasonCompleted})
	require.NoError(t, err)
	require.NoError(t, log.Close())

	after, err := s.Load(ctx(), "meta")
	require.NoError(t, err)
	assert.Equal(t, before.Events, after.Events[:len(before.Events)], "the log is not rewritten")
	assert.Len(t, after.Events, len(before.Events)+1)

	// Listing by tag.
	other, err := s.Create(ctx(), session.Header{ID: "other", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, other.Close())
	_, err = s.Tag(ctx(), "other", []string{"ci"}, nil)
	require.NoError(t, err)
	infos, err := s.List(ctx(), session.ListOptions{Tags: []string{"ci", "p1"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"meta"}, ids(infos))
	infos, err = s.List(ctx(), session.ListOptions{Tags: []string{"ci"}, Workspace: "/w"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"meta", "other"}, ids(infos))

	// An empty title shows the first user message again.
	require.NoError(t, s.Rename(ctx(), "meta", ""))
	title, _ = tagsOf(t, s, "meta")
	assert.Equal(t, "fix the flaky test in ci", title)

	// A fork starts without them.
	h, err := s.Fork(ctx(), "meta", session.ForkOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Rename(ctx(), "meta", "named"))
	title, tags = tagsOf(t, s, h.ID)
	assert.Equal(t, "fix the flaky test in ci", title)
	assert.Empty(t, tags)

	// Refusals.
	assert.ErrorIs(t, s.Rename(ctx(), "meta", "two\nlines"), harness.CodeInvalidOption)
	assert.ErrorIs(t, s.Rename(ctx(), "meta", strings.Repeat("x", session.MaxTitleBytes+1)), harness.CodeInvalidOption)
	_, err = s.Tag(ctx(), "meta", []string{"has space"}, nil)
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = s.Tag(ctx(), "meta", []string{""}, nil)
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	title, tags = tagsOf(t, s, "meta")
	assert.Equal(t, "named", title, "a refused change changes nothing")
	assert.Equal(t, []string{"ci", "p1"}, tags)
	assert.ErrorIs(t, s.Rename(ctx(), "no-such-session", "x"), harness.CodeNotFound)
	_, err = s.Tag(ctx(), "no-such-session", []string{"x"}, nil)
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.ErrorIs(t, s.Rename(ctx(), "../x", "x"), harness.CodeInvalidID)

	// Deleting a session deletes them: a new session of the same id
	// starts bare.
	require.NoError(t, s.Delete(ctx(), "meta"))
	again, err := s.Create(ctx(), session.Header{ID: "meta", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, again.Close())
	title, tags = tagsOf(t, s, "meta")
	assert.Empty(t, title)
	assert.Empty(t, tags)
}
