package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/search"
)

// maxLine is the bound a store reports, as the conformance suite reads it.
func maxLine(s session.Store) int { return s.(interface{ MaxLineSize() int }).MaxLineSize() }

func TestMaxLineSizeOption(t *testing.T) {
	assert.Equal(t, 16<<20, maxLine(session.NewJSONL(t.TempDir(), session.StoreConfig{})))
	assert.Equal(t, 16<<20, maxLine(session.NewMemory(session.StoreConfig{})))
	assert.Equal(t, 4096, maxLine(session.NewJSONL(t.TempDir(), session.StoreConfig{MaxLineSize: 4096})))
	assert.Equal(t, 4096, maxLine(session.NewMemory(session.StoreConfig{MaxLineSize: 4096})))
	assert.Equal(t, 16<<20, maxLine(session.NewMemory(session.StoreConfig{MaxLineSize: 0})), "0 means the default")
}

// TestMinLineSize checks the bound StoreConfig.MaxLineSize requires against the
// shortest header line the format allows.
func TestMinLineSize(t *testing.T) {
	assert.Equal(t, session.ShortestHeaderLine(), session.MinLineSize)
}

// TestInvalidMaxLineSize checks that a bound no log fits in is reported
// by every method of the store, not clamped, and that nothing is written.
func TestInvalidMaxLineSize(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{-5, -1, 1, session.MinLineSize - 1} {
		dir := t.TempDir()
		for name, s := range map[string]session.Store{
			"jsonl":  session.NewJSONL(dir, session.StoreConfig{MaxLineSize: n}),
			"memory": session.NewMemory(session.StoreConfig{MaxLineSize: n}),
		} {
			check := func(what string, err error) {
				t.Helper()
				require.Error(t, err, "%s %s(%d)", name, what, n)
				assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err), "%s %s(%d)", name, what, n)
				assert.ErrorContains(t, err, fmt.Sprintf("StoreConfig.MaxLineSize is %d: a log line must be allowed at least %d bytes", n, session.MinLineSize))
			}
			_, err := s.Create(ctx, session.Header{ID: "s1"})
			check("Create", err)
			_, _, err = s.Open(ctx, "s1")
			check("Open", err)
			_, err = s.Load(ctx, "s1")
			check("Load", err)
			_, err = s.List(ctx, session.ListOptions{})
			check("List", err)
			check("Delete", s.Delete(ctx, "s1"))
			_, err = search.Search(ctx, s, search.Options{Query: "x", AllWorkspaces: true})
			check("Search", err)
			_, err = (&session.Retention{Store: s}).Prune(ctx, session.PruneOptions{OlderThan: time.Hour})
			check("Prune", err)
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "nothing written with MaxLineSize %d", n)
	}

	// The shortest workable bound holds a log with a short header.
	for _, s := range []session.Store{session.NewJSONL(t.TempDir(), session.StoreConfig{MaxLineSize: session.MinLineSize}), session.NewMemory(session.StoreConfig{MaxLineSize: session.MinLineSize})} {
		log, err := s.Create(ctx, session.Header{ID: "a", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
		require.NoError(t, err)
		require.NoError(t, log.Close())
		tr, err := s.Load(ctx, "a")
		require.NoError(t, err)
		assert.Equal(t, "a", tr.Header.ID)
	}
}

// TestHeaderTooLarge checks that Create refuses a header line longer
// than the store reads, rather than writing a log it cannot load.
func TestHeaderTooLarge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, s := range map[string]session.Store{
		"jsonl":  session.NewJSONL(dir, session.StoreConfig{MaxLineSize: 1024}),
		"memory": session.NewMemory(session.StoreConfig{MaxLineSize: 1024}),
	} {
		_, err := s.Create(ctx, session.Header{ID: "big", Cwd: "/" + strings.Repeat("w", 1024)})
		require.Error(t, err, name)
		assert.Equal(t, harness.CodeTooLarge, harness.CodeOf(err), name)
		assert.ErrorContains(t, err, "session big: the header is", name)
		assert.ErrorContains(t, err, "more than the log's maximum line size of 1024 bytes; nothing was written", name)
		_, err = s.Load(ctx, "big")
		assert.Equal(t, harness.CodeNotFound, harness.CodeOf(err), name)

		log, err := s.Create(ctx, session.Header{ID: "fits", Cwd: "/" + strings.Repeat("w", 800)})
		require.NoError(t, err, name)
		require.NoError(t, log.Close())
		_, err = s.Load(ctx, "fits")
		require.NoError(t, err, name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "fits.jsonl", entries[0].Name())
}

func TestEventTooLargeError(t *testing.T) {
	s := session.NewTestJSONL(t.TempDir(), session.StoreConfig{MaxLineSize: 4096})
	log, err := s.Create(context.Background(), session.Header{ID: "s1", Cwd: "/w"})
	require.NoError(t, err)
	defer log.Close()
	_, err = log.Append(context.Background(), &session.SystemPrompt{Text: strings.Repeat("x", 5000)})
	assert.True(t, errors.Is(err, harness.CodeTooLarge))
	assert.False(t, errors.Is(err, harness.CodeClosed))
	assert.Equal(t, harness.CodeTooLarge, harness.CodeOf(err))
	var tl *session.EventTooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, session.EventTooLargeError{Session: "s1", Seq: 1, Type: "system", Size: tl.Size, Max: 4096}, *tl)
	assert.Greater(t, tl.Size, 5000)
	assert.Equal(t, fmt.Sprintf("session s1: the system event 1 is %d bytes encoded, more than the log's maximum line size of 4096 bytes; nothing of this append was written", tl.Size), err.Error())
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A line longer than the store reads is skipped with a warning, in
// memory bounded by the maximum, not by the line.
func TestLongLineSkippedInBoundedMemory(t *testing.T) {
	const max = 64 << 10
	const long = 12 << 20
	big := reminderLine(2, strings.Repeat("y", long))
	s := writeRaw(t, "big", reminderLine(1, "before"), big, reminderLine(3, "after"))
	small := session.NewTestJSONL(s.Dir(), session.StoreConfig{MaxLineSize: max})
	var tr *session.Transcript
	var err error
	alloc := allocated(func() { tr, err = small.Load(context.Background(), "big") })
	require.NoError(t, err)
	t.Logf("loading a log with a %d-byte line allocated %d bytes", len(big), alloc)
	assert.Less(t, alloc, uint64(2<<20), "loading allocated %d bytes for a %d-byte line", alloc, len(big))
	require.Len(t, tr.Events, 2)
	assert.Equal(t, "before", tr.Events[0].Data.(*session.Reminded).Text)
	assert.Equal(t, "after", tr.Events[1].Data.(*session.Reminded).Text, "nothing after the long line is lost")
	assert.Equal(t, []string{fmt.Sprintf("line 3: event 2 (reminder) of %d bytes, more than the maximum line size of 65536 bytes, skipped unread", len(big))}, warningTexts(tr.Warnings))

	// The default store reads it.
	tr, err = s.Load(context.Background(), "big")
	require.NoError(t, err)
	assert.Len(t, tr.Events, 3)
	assert.Empty(t, tr.Warnings)

	// Search streams past it too, and finds what is around it.
	var ms []search.Match
	alloc = allocated(func() {
		ms, err = search.Search(context.Background(), small, search.Options{Query: "yyyy", Workspace: "/w"})
	})
	require.NoError(t, err)
	t.Logf("searching it allocated %d bytes", alloc)
	assert.Empty(t, ms, "a line the store does not read is not searched")
	assert.Less(t, alloc, uint64(8<<20), "search allocated %d bytes", alloc)
	ms, err = search.Search(context.Background(), small, search.Options{Query: "after", Workspace: "/w"})
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Equal(t, int64(3), ms[0].Seq)
}

func TestLongLastLineWithoutNewline(t *testing.T) {
	s := writeRaw(t, "tail", reminderLine(1, "a"))
	last := reminderLine(2, strings.Repeat("z", 5000))
	appendRaw(t, s.Path("tail"), last)
	small := session.NewTestJSONL(s.Dir(), session.StoreConfig{MaxLineSize: 1024})
	log, tr, err := small.Open(context.Background(), "tail")
	require.NoError(t, err)
	require.Len(t, tr.Events, 1)
	assert.Equal(t, []string{fmt.Sprintf("line 3: event 2 (reminder) of %d bytes at the end of the log, without a newline and more than the maximum line size of 1024 bytes, skipped unread", len(last))}, warningTexts(tr.Warnings))
	evs, err := log.Append(context.Background(), &session.Reminded{Reminder: harness.Reminder{Text: "b"}})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	assert.Equal(t, int64(2), evs[0].Seq, "an unterminated line may be torn: its number is not taken")
	tr, err = small.Load(context.Background(), "tail")
	require.NoError(t, err)
	require.Len(t, tr.Events, 2)
	assert.Equal(t, "b", tr.Events[1].Data.(*session.Reminded).Text, "the new event starts on a line of its own")
}

func TestLongHeaderRefused(t *testing.T) {
	dir := t.TempDir()
	s := session.NewTestJSONL(dir, session.StoreConfig{MaxLineSize: 1024})
	header := `{"type":"session","format":1,"id":"h","cwd":"/` + strings.Repeat("d", 2000) + `","created":"2026-01-01T00:00:00Z"}` + "\n"
	require.NoError(t, os.WriteFile(s.Path("h"), []byte(header), 0o600))
	_, err := s.Load(context.Background(), "h")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the first line is not a session header")
	assert.Contains(t, err.Error(), "more than the maximum line size of 1024")
}

// A line skipped unread because it is too long still holds an event
// whose number must not be reused.
func TestSkippedLongLineKeepsItsNumber(t *testing.T) {
	s := writeRaw(t, "long", reminderLine(1, "a"), reminderLine(2, strings.Repeat("x", 4000)))
	small := session.NewTestJSONL(s.Dir(), session.StoreConfig{MaxLineSize: 1024})
	log, tr, err := small.Open(context.Background(), "long")
	require.NoError(t, err)
	require.Len(t, tr.Events, 1)
	evs, err := log.Append(context.Background(), &session.Reminded{Reminder: harness.Reminder{Text: "b"}})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	assert.Equal(t, int64(3), evs[0].Seq)
}
