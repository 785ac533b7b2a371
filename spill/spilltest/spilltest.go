package spilltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

// TestStore runs the conformance suite. newStore must return an empty
// store each time it is called.
func TestStore(t *testing.T, newStore func(t *testing.T) spill.Store) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, newStore(t)) })
	t.Run("DistinctLocators", func(t *testing.T) { testDistinct(t, newStore(t)) })
	t.Run("HostileOwnerIDs", func(t *testing.T) { testHostileOwners(t, newStore(t)) })
	t.Run("UnknownLocators", func(t *testing.T) { testUnknownLocators(t, newStore(t)) })
	t.Run("FailedSave", func(t *testing.T) { testFailedSave(t, newStore(t)) })
	t.Run("DeleteSession", func(t *testing.T) { testDeleteSession(t, newStore(t)) })
	t.Run("Expire", func(t *testing.T) { testExpire(t, newStore(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newStore(t)) })
	t.Run("CancelledContext", func(t *testing.T) { testCancelled(t, newStore(t)) })
}

// TestStoreBudget checks that a store keeps its per-session byte budget: saves
// up to the budget succeed, one past it fails with harness.CodeSpillBudget (a
// its cause a *spill.BudgetError) and keeps nothing, other sessions are not affected, and
// deleted or expired outputs give their bytes back. newStore must return an
// empty store whose sessions may keep budget bytes each; the suite asks for
// small budgets.
func TestStoreBudget(t *testing.T, newStore func(t *testing.T, budget int64) spill.Store) {
	t.Run("UpToTheBudget", func(t *testing.T) { testBudgetFill(t, newStore(t, 1000)) })
	t.Run("FailedSaveKeepsNothing", func(t *testing.T) { testBudgetFailed(t, newStore(t, 1000)) })
	t.Run("PerSession", func(t *testing.T) { testBudgetPerSession(t, newStore(t, 1000)) })
	t.Run("DeleteAndExpireGiveBack", func(t *testing.T) { testBudgetGiveBack(t, newStore(t, 1000)) })
	t.Run("Concurrent", func(t *testing.T) { testBudgetConcurrent(t, newStore(t, 1000)) })
	t.Run("LargeStream", func(t *testing.T) { testBudgetLargeStream(t, newStore(t, 3<<20)) })
}

func save(t *testing.T, s spill.Store, o tools.Owner, n int) (tools.Stored, error) {
	t.Helper()
	return s.Save(context.Background(), o, strings.NewReader(strings.Repeat("b", n)))
}

func requireBudgetError(t *testing.T, err error, budget, used int64) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, harness.CodeSpillBudget)
	var be *spill.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, budget, be.Budget)
	assert.Equal(t, used, be.Used, "the bytes the session's other outputs take")
	assert.Contains(t, err.Error(), "spill budget")
}

func testBudgetFill(t *testing.T, s spill.Store) {
	a, err := save(t, s, owner("s", "bash", "1"), 600)
	require.NoError(t, err)
	b, err := save(t, s, owner("s", "bash", "2"), 400)
	require.NoError(t, err, "exactly the budget fits")
	assert.Equal(t, int64(400), b.Size)
	_, err = save(t, s, owner("s", "bash", "3"), 1)
	requireBudgetError(t, err, 1000, 1000)
	st, err := save(t, s, owner("s", "bash", "4"), 0)
	require.NoError(t, err, "an empty output takes no budget")
	assert.Empty(t, ReadAll(t, s, st.Locator))
	assert.Len(t, ReadAll(t, s, a.Locator), 600, "what was saved stays readable")
}

func testBudgetFailed(t *testing.T, s spill.Store) {
	_, err := save(t, s, owner("s", "bash", "1"), 900)
	require.NoError(t, err)
	st, err := save(t, s, owner("s", "bash", "2"), 200)
	requireBudgetError(t, err, 1000, 900)
	assert.Empty(t, st.Locator, "a refused output has no locator")
	// The refused save gave back what it had taken.
	_, err = save(t, s, owner("s", "bash", "3"), 100)
	require.NoError(t, err)
}

func testBudgetPerSession(t *testing.T, s spill.Store) {
	_, err := save(t, s, owner("full", "bash", "1"), 1000)
	require.NoError(t, err)
	_, err = save(t, s, owner("full", "bash", "2"), 10)
	requireBudgetError(t, err, 1000, 1000)
	// A session whose id sanitizes alike has a budget of its own.
	for _, id := range []string{"other", "full/", ""} {
		_, err = save(t, s, owner(id, "bash", "1"), 1000)
		require.NoError(t, err, "session %q", id)
	}
}

func testBudgetGiveBack(t *testing.T, s spill.Store) {
	ctx := context.Background()
	_, err := save(t, s, owner("s", "bash", "1"), 1000)
	require.NoError(t, err)
	require.NoError(t, s.DeleteSession(ctx, "s"))
	st, err := save(t, s, owner("s", "bash", "2"), 1000)
	require.NoError(t, err, "deleting the session gave its budget back")
	_, err = save(t, s, owner("s", "bash", "3"), 1)
	requireBudgetError(t, err, 1000, 1000)
	n, err := s.Expire(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	requireNotFound(t, s, st.Locator)
	_, err = save(t, s, owner("s", "bash", "4"), 1000)
	require.NoError(t, err, "expired outputs gave their bytes back")
}

func testBudgetConcurrent(t *testing.T, s spill.Store) {
	var wg sync.WaitGroup
	locs := make([]string, 12)
	errs := make([]error, 12)
	for i := range locs {
		wg.Go(func() {
			st, err := s.Save(context.Background(), owner("s", "bash", fmt.Sprint(i)), strings.NewReader(strings.Repeat("c", 300)))
			locs[i], errs[i] = st.Locator, err
		})
	}
	wg.Wait()
	saved := 0
	for i, err := range errs {
		if err != nil {
			assert.ErrorIs(t, err, harness.CodeSpillBudget)
			continue
		}
		saved++
		assert.Len(t, ReadAll(t, s, locs[i]), 300)
	}
	assert.LessOrEqual(t, saved*300, 1000, "concurrent saves never exceed the budget together")
	assert.GreaterOrEqual(t, saved, 1, "the budget is not lost to concurrent attempts")
}

func testBudgetLargeStream(t *testing.T, s spill.Store) {
	// A stream larger than the budget is refused part way, without
	// reading it all first.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := s.Save(ctx, owner("s", "bash", "1"), &cancelAfter{r: endlessReader{}, n: 64 << 20, cancel: cancel})
	requireBudgetError(t, err, 3<<20, 0)
	_, err = save(t, s, owner("s", "bash", "2"), 3<<20)
	require.NoError(t, err, "the refused stream gave back what it had taken")
}

func owner(session, tool, call string) tools.Owner {
	return tools.Owner{Session: session, Tool: tool, Call: call}
}

// ReadAll opens locator in s and returns its bytes.
func ReadAll(t testing.TB, s tools.OutputStore, locator string) []byte {
	t.Helper()
	rc, err := s.Open(context.Background(), locator)
	require.NoError(t, err, "opening %s", locator)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}

// requireNotFound asserts that opening locator fails with
// harness.CodeNotFound, which matches io/fs.ErrNotExist too.
func requireNotFound(t testing.TB, s tools.OutputStore, locator string) {
	t.Helper()
	rc, err := s.Open(context.Background(), locator)
	if err == nil {
		rc.Close()
		t.Fatalf("Open(%q) succeeded; want an error matching harness.CodeNotFound", locator)
	}
	assert.ErrorIs(t, err, harness.CodeNotFound, "Open(%q)", locator)
	assert.ErrorIs(t, err, iofs.ErrNotExist, "Open(%q)", locator)
}

func testRoundTrip(t *testing.T, s spill.Store) {
	ctx := context.Background()
	binary := make([]byte, 3<<20+17)
	for i := range binary {
		binary[i] = byte(i*7 + i>>9)
	}
	for name, data := range map[string][]byte{
		"empty":   nil,
		"text":    []byte("line one\nline two — ünïcode ✓\n"),
		"binary":  binary,
		"nul":     {0, 0, '\n', 0xff, 0xfe},
		"newline": []byte("\n"),
	} {
		t.Run(name, func(t *testing.T) {
			st, err := s.Save(ctx, owner("sess-1", "bash", "call_1"), bytes.NewReader(data))
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(st.Locator, tools.OutputScheme), "locator %q starts with %q", st.Locator, tools.OutputScheme)
			assert.Equal(t, int64(len(data)), st.Size)
			got := ReadAll(t, s, st.Locator)
			assert.True(t, bytes.Equal(data, got), "read back %d bytes, saved %d", len(got), len(data))
			// Twice: opening does not consume the output.
			assert.Equal(t, len(data), len(ReadAll(t, s, st.Locator)))
		})
	}
}

func testDistinct(t *testing.T, s spill.Store) {
	ctx := context.Background()
	seen := map[string]string{}
	for i := range 20 {
		text := fmt.Sprintf("output %d", i)
		st, err := s.Save(ctx, owner("s", "bash", "same-call"), strings.NewReader(text))
		require.NoError(t, err)
		_, dup := seen[st.Locator]
		require.False(t, dup, "locator %q returned twice", st.Locator)
		seen[st.Locator] = text
	}
	for loc, text := range seen {
		assert.Equal(t, text, string(ReadAll(t, s, loc)), "saving again under one owner must not overwrite")
	}
}

// hostileIDs returns owner ids that try to escape a directory or break a name.
func hostileIDs() []string {
	return []string{
		"", ".", "..", "../..", "../../../../etc/passwd", "/", "/etc/passwd", `..\..\windows`,
		"a/b/c", "a\x00b", "spill://x/y", "nl\nid", strings.Repeat("long", 200), "ünïcode ✓", "*", "~", "$HOME",
	}
}

func testHostileOwners(t *testing.T, s spill.Store) {
	ctx := context.Background()
	for i, id := range hostileIDs() {
		data := fmt.Sprintf("hostile %d %q", i, id)
		st, err := s.Save(ctx, owner(id, id, id), strings.NewReader(data))
		require.NoError(t, err, "owner id %q", id)
		rest := strings.TrimPrefix(st.Locator, tools.OutputScheme)
		for _, seg := range strings.Split(rest, "/") {
			assert.NotContains(t, []string{"", ".", ".."}, seg, "locator %q has a bad segment", st.Locator)
		}
		assert.NotContains(t, st.Locator, "\x00")
		assert.NotContains(t, st.Locator, "\\")
		assert.Equal(t, data, string(ReadAll(t, s, st.Locator)))
	}
}

func testUnknownLocators(t *testing.T, s spill.Store) {
	ctx := context.Background()
	st, err := s.Save(ctx, owner("s1", "bash", "c1"), strings.NewReader("secret"))
	require.NoError(t, err)
	rest := strings.TrimPrefix(st.Locator, tools.OutputScheme)
	dir, file, _ := strings.Cut(rest, "/")
	for _, loc := range []string{
		"", tools.OutputScheme, tools.OutputScheme + dir, tools.OutputScheme + dir + "/",
		strings.TrimPrefix(st.Locator, tools.OutputScheme), // no scheme
		"file://" + rest, "SPILL://" + rest,
		st.Locator + "x", st.Locator + "/", st.Locator + "/..", " " + st.Locator, st.Locator + "\x00",
		tools.OutputScheme + "../" + rest, tools.OutputScheme + dir + "/../" + rest,
		tools.OutputScheme + dir + "/./" + file, tools.OutputScheme + "/" + rest, tools.OutputScheme + dir + "//" + file,
		tools.OutputScheme + "..", tools.OutputScheme + "../..", tools.OutputScheme + "../../../../etc/passwd",
		tools.OutputScheme + "/etc/passwd", tools.OutputScheme + dir + "/../../" + dir + "/" + file,
		tools.OutputScheme + "x-00000000/bash-c1-0000000000000000.txt",
		tools.OutputScheme + dir + "/bash-c1-0000000000000000.txt",
		tools.OutputScheme + dir + `\..\` + file,
		tools.OutputScheme + "%2e%2e/" + rest,
	} {
		requireNotFound(t, s, loc)
	}
	assert.Equal(t, "secret", string(ReadAll(t, s, st.Locator)), "the real locator still works")
}

type failingReader struct {
	n   int
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, r.err
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

func testFailedSave(t *testing.T, s spill.Store) {
	ctx := context.Background()
	boom := errors.New("boom")
	_, err := s.Save(ctx, owner("s", "bash", "c"), &failingReader{n: 1 << 20, err: boom})
	require.Error(t, err)
	assert.ErrorIs(t, err, boom, "the reader's error is reported")
	// A later save under the same owner still works.
	st, err := s.Save(ctx, owner("s", "bash", "c"), strings.NewReader("ok"))
	require.NoError(t, err)
	assert.Equal(t, "ok", string(ReadAll(t, s, st.Locator)))
}

func testDeleteSession(t *testing.T, s spill.Store) {
	ctx := context.Background()
	a1, err := s.Save(ctx, owner("session-a", "bash", "1"), strings.NewReader("a1"))
	require.NoError(t, err)
	a2, err := s.Save(ctx, owner("session-a", "grep", "2"), strings.NewReader("a2"))
	require.NoError(t, err)
	// An id that sanitizes like session-a must not share its outputs.
	alike, err := s.Save(ctx, owner("session/a", "bash", "1"), strings.NewReader("alike"))
	require.NoError(t, err)
	b, err := s.Save(ctx, owner("session-b", "bash", "1"), strings.NewReader("b"))
	require.NoError(t, err)

	require.NoError(t, s.DeleteSession(ctx, "session-a"))
	requireNotFound(t, s, a1.Locator)
	requireNotFound(t, s, a2.Locator)
	assert.Equal(t, "alike", string(ReadAll(t, s, alike.Locator)))
	assert.Equal(t, "b", string(ReadAll(t, s, b.Locator)))

	require.NoError(t, s.DeleteSession(ctx, "session-a"), "deleting twice is fine")
	require.NoError(t, s.DeleteSession(ctx, "never-saved"))
	for _, id := range hostileIDs() {
		require.NoError(t, s.DeleteSession(ctx, id), "id %q", id)
	}
	assert.Equal(t, "b", string(ReadAll(t, s, b.Locator)), "hostile ids delete nothing else")

	// The session can save again after deletion.
	a3, err := s.Save(ctx, owner("session-a", "bash", "3"), strings.NewReader("a3"))
	require.NoError(t, err)
	assert.Equal(t, "a3", string(ReadAll(t, s, a3.Locator)))
}

func testExpire(t *testing.T, s spill.Store) {
	ctx := context.Background()
	var locs []string
	for i := range 3 {
		st, err := s.Save(ctx, owner(fmt.Sprintf("s%d", i%2), "bash", fmt.Sprint(i)), strings.NewReader(fmt.Sprint(i)))
		require.NoError(t, err)
		locs = append(locs, st.Locator)
	}
	n, err := s.Expire(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 0, n, "nothing is older than an hour")
	for i, loc := range locs {
		assert.Equal(t, fmt.Sprint(i), string(ReadAll(t, s, loc)))
	}
	n, err = s.Expire(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 3, n, "everything is older than an hour from now")
	for _, loc := range locs {
		requireNotFound(t, s, loc)
	}
	n, err = s.Expire(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	// Saving after expiry works (the session's namespace may be gone).
	st, err := s.Save(ctx, owner("s0", "bash", "again"), strings.NewReader("again"))
	require.NoError(t, err)
	assert.Equal(t, "again", string(ReadAll(t, s, st.Locator)))
}

func testConcurrent(t *testing.T, s spill.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	locs := make([]string, 16)
	errs := make([]error, 16)
	for i := range locs {
		wg.Go(func() {
			data := strings.Repeat(fmt.Sprintf("%02d", i), 50_000)
			st, err := s.Save(ctx, owner(fmt.Sprintf("s%d", i%3), "bash", "c"), strings.NewReader(data))
			locs[i], errs[i] = st.Locator, err
		})
	}
	wg.Go(func() { _, _ = s.Expire(ctx, time.Now().Add(-time.Hour)) })
	wg.Wait()
	for i, loc := range locs {
		require.NoError(t, errs[i])
		assert.Equal(t, strings.Repeat(fmt.Sprintf("%02d", i), 50_000), string(ReadAll(t, s, loc)))
	}
}

// endlessReader never ends.
type endlessReader struct{}

func (endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'y'
	}
	return len(p), nil
}

type cancelAfter struct {
	r      io.Reader
	n      int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n -= int64(n)
	if c.n <= 0 {
		c.cancel()
	}
	return n, err
}

func testCancelled(t *testing.T, s spill.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Save(ctx, owner("s", "bash", "c"), strings.NewReader("x"))
	assert.ErrorIs(t, err, context.Canceled)
	_, err = s.Open(ctx, tools.OutputScheme+"x")
	assert.Error(t, err)

	// A save cancelled while it streams stops and reports the cancellation
	// instead of reading forever.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, err = s.Save(ctx, owner("s", "bash", "c"), &cancelAfter{r: endlessReader{}, n: 4 << 20, cancel: cancel})
	assert.ErrorIs(t, err, context.Canceled)
}
