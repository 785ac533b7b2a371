package sessiontest

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/storekit"
	"github.com/go-harness/harness/session/search"
)

// lineOverhead returns the length of the line of a reminder with empty
// text, as the store wrote it.
func lineOverhead(t *testing.T, log session.Log) int {
	t.Helper()
	evs, err := log.Append(ctx(), &session.Reminded{Reminder: harness.Reminder{Source: "s"}})
	require.NoError(t, err)
	line, err := evs[0].MarshalJSON()
	require.NoError(t, err)
	return len(line)
}

// slack covers how much the line of the same payload can differ in length
// between two appends: the time's fraction of a second and the seq's digits.
const slack = 40

func testRefusedWhole(t *testing.T, s session.Store, max int) {
	log, err := s.Create(ctx(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	defer log.Close()
	id := log.Header().ID
	overhead := lineOverhead(t, log)

	huge := &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: strings.Repeat("x", max-overhead+slack)}}
	_, err = log.Append(ctx(), &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: "small"}}, huge, &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: "after"}})
	require.ErrorIs(t, err, harness.CodeTooLarge)
	var tl *session.EventTooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(3), tl.Seq, "the second event of the batch, after the first append's event 1")
	assert.Equal(t, session.TypeReminder, tl.Type)
	assert.Equal(t, max, tl.Max)
	assert.Greater(t, tl.Size, max)
	assert.Equal(t, id, tl.Session)

	tr, err := s.Load(ctx(), id)
	require.NoError(t, err)
	assert.Len(t, tr.Events, 1, "nothing of the refused batch is written")
	assert.Empty(t, tr.Warnings)

	evs, err := log.Append(ctx(), &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: "next"}})
	require.NoError(t, err, "the log stays usable")
	assert.Equal(t, int64(2), evs[0].Seq, "numbering has no gap")
	require.NoError(t, log.Close())

	log2, tr, err := s.Open(ctx(), id)
	require.NoError(t, err)
	defer log2.Close()
	require.Len(t, tr.Events, 2)
	assert.Equal(t, "next", tr.Events[1].Data.(*session.Reminded).Text)
	assert.Empty(t, tr.Warnings)
}

func testAtTheLimit(t *testing.T, s session.Store, max int) {
	log, err := s.Create(ctx(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	defer log.Close()
	overhead := lineOverhead(t, log)
	text := strings.Repeat("y", max-overhead-slack)
	_, err = log.Append(ctx(), &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: text}})
	require.NoError(t, err, "an event that fits is written")
	tr, err := s.Load(ctx(), log.Header().ID)
	require.NoError(t, err)
	require.Len(t, tr.Events, 2)
	assert.Equal(t, text, tr.Events[1].Data.(*session.Reminded).Text, "and read back whole")
	assert.Empty(t, tr.Warnings)
}

func testAnyTypeBounded(t *testing.T, s session.Store, max int) {
	log, err := s.Create(ctx(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	defer log.Close()
	big := strings.Repeat("z", max)
	for _, p := range []session.Payload{
		&session.UserMessage{Content: []harness.Block{harness.TextBlock(big)}},
		&session.AssistantMessage{Step: 1, Content: []harness.Block{harness.TextBlock(big)}},
		&session.ToolFinished{Step: 1, CallID: "c", Name: "bash", Result: *harness.TextResult(big)},
		&session.ToolRecord{Tool: "bash", Name: "env", Data: []byte(`"` + big + `"`)},
		&session.Unknown{Type: "future", Data: []byte(`"` + big + `"`)},
	} {
		_, err := log.Append(ctx(), p)
		assert.ErrorIs(t, err, harness.CodeTooLarge, "%s event", session.Event{Data: p}.Type())
	}
	tr, err := s.Load(ctx(), log.Header().ID)
	require.NoError(t, err)
	assert.Empty(t, tr.Events)
}

// maxLineOf returns the store's maximum line size.
func maxLineOf(s session.Store) int {
	if m, ok := s.(interface{ MaxLineSize() int }); ok {
		return m.MaxLineSize()
	}
	return storekit.DefaultMaxLineSize
}

// testDefaultBound checks that a store bounds its lines out of the box.
func testDefaultBound(t *testing.T, s session.Store) {
	log, err := s.Create(ctx(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	defer log.Close()
	max := maxLineOf(s)
	_, err = log.Append(ctx(), &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: "kept"}})
	require.NoError(t, err)
	_, err = log.Append(ctx(), &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: "lost with the batch"}},
		&session.ToolFinished{Step: 1, CallID: "c", Name: "bash", Result: *harness.TextResult(strings.Repeat("x", max))})
	require.ErrorIs(t, err, harness.CodeTooLarge)
	assert.False(t, errors.Is(err, harness.CodeClosed))
	tr, err := s.Load(ctx(), log.Header().ID)
	require.NoError(t, err)
	require.Len(t, tr.Events, 1)
	assert.Equal(t, "kept", tr.Events[0].Data.(*session.Reminded).Text)
}

// testBackslashWorkspace checks that a backslash in a workspace is a name
// character: "/w/a\.." is not /w, and reaches nothing of /w/b.
func testBackslashWorkspace(t *testing.T, s session.Store) {
	for id, cwd := range map[string]string{"victim": "/w/b", "own": `/w/a\..`, "inside": `/w/a\../sub`} {
		log, err := s.Create(ctx(), session.Header{ID: id, Cwd: cwd})
		require.NoError(t, err)
		_, err = log.Append(ctx(), &session.UserMessage{Content: []harness.Block{harness.TextBlock("the secret of " + id)}})
		require.NoError(t, err)
		require.NoError(t, log.Close())
	}
	infos, err := s.List(ctx(), session.ListOptions{Workspace: `/w/a\..`})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"own", "inside"}, ids(infos))
	ms, err := search.Search(ctx(), s, search.Options{Query: "secret", Workspace: `/w/a\..`})
	require.NoError(t, err)
	var found []string
	for _, m := range ms {
		found = append(found, m.Session.Header.ID)
	}
	assert.ElementsMatch(t, []string{"own", "inside"}, found)
	infos, err = s.List(ctx(), session.ListOptions{Workspace: "/w"})
	require.NoError(t, err)
	assert.Len(t, infos, 3, "all three are below /w")
}
