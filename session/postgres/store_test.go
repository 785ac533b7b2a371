package postgres_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
	"github.com/go-harness/harness/session/search"
	"github.com/go-harness/harness/session/sessiontest"
)

func TestConformance(t *testing.T) {
	serverURL(t)
	sessiontest.TestStore(t, func(t *testing.T, max int) session.Store {
		if max == 0 {
			return newStore(t, postgres.Config{})
		}
		return newStore(t, postgres.Config{MaxLineSize: max})
	})
}

func TestOptionsAndPool(t *testing.T) {
	_, err := postgres.New(ctx(), nil, postgres.Config{})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.ErrorContains(t, err, "connection pool")
	for _, n := range []int{-1, -4096} {
		// The configuration is checked before the pool and the database.
		_, err := postgres.New(ctx(), nil, postgres.Config{MaxLineSize: n})
		assert.ErrorIs(t, err, harness.CodeInvalidOption)
		assert.ErrorContains(t, err, "must be positive")
	}
	s := newStore(t, postgres.Config{MaxLineSize: 4096})
	assert.Equal(t, 4096, s.(interface{ MaxLineSize() int }).MaxLineSize(), "the bound is found by assertion")
	_, ok := s.(search.Searcher)
	assert.True(t, ok, "search.Search runs in SQL")
}

func TestMigrations(t *testing.T) {
	leakcheck.Check(t)
	pool, _ := newSchema(t)
	// Processes starting together migrate once.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = postgres.New(ctx(), pool, postgres.Config{}) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	var versions []int
	rows, err := pool.Query(ctx(), `SELECT version FROM harness_schema_migrations ORDER BY version`)
	require.NoError(t, err)
	versions, err = pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, versions, "each migration applied once")

	// A session survives a new store on the same database.
	s, err := postgres.New(ctx(), pool, postgres.Config{})
	require.NoError(t, err)
	log, err := s.Create(ctx(), session.Header{ID: "kept", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	s2, err := postgres.New(ctx(), pool, postgres.Config{})
	require.NoError(t, err)
	_, err = s2.Load(ctx(), "kept")
	require.NoError(t, err)

	// A schema from a newer build is refused.
	_, err = pool.Exec(ctx(), `INSERT INTO harness_schema_migrations (version, name) VALUES (99, '0099_future.sql')`)
	require.NoError(t, err)
	_, err = postgres.New(ctx(), pool, postgres.Config{})
	require.ErrorIs(t, err, harness.CodeUnsupportedFormat)
	assert.ErrorContains(t, err, "version 99")
}

func TestNewerHeaderRefused(t *testing.T) {
	pool, _ := newSchema(t)
	s, err := postgres.New(ctx(), pool, postgres.Config{})
	require.NoError(t, err)
	log, err := s.Create(ctx(), session.Header{ID: "future", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	_, err = pool.Exec(ctx(), `UPDATE harness_sessions SET header = replace(header, '"format":1', '"format":7')`)
	require.NoError(t, err)
	_, err = s.Load(ctx(), "future")
	require.ErrorIs(t, err, harness.CodeUnsupportedFormat)
	assert.Contains(t, err.Error(), "log format 7, this build reads up to 1")
	_, _, err = s.Open(ctx(), "future")
	assert.ErrorIs(t, err, harness.CodeUnsupportedFormat)
}

// TestFencedAfterLostLock checks what a writer does when its connection,
// and with it the lock, is gone, and when the session moved on without
// it: nothing is written over another writer's events.
func TestFencedAfterLostLock(t *testing.T) {
	pool, _ := newSchema(t)
	s, err := postgres.New(ctx(), pool, postgres.Config{})
	require.NoError(t, err)
	rem := func(text string) session.Payload {
		return &session.Reminded{Reminder: harness.Reminder{Source: "s", Text: text}}
	}

	t.Run("ConnectionKilled", func(t *testing.T) {
		log, err := s.Create(ctx(), session.Header{ID: "killed", Cwd: "/w"})
		require.NoError(t, err)
		defer log.Close()
		_, err = log.Append(ctx(), rem("one"))
		require.NoError(t, err)
		_, err = pool.Exec(ctx(), `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()`)
		require.NoError(t, err)
		// pg_terminate_backend only signals the backend: its lock goes
		// when it has exited.
		require.Eventually(t, func() bool {
			var n int
			err := pool.QueryRow(ctx(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()`).Scan(&n)
			return err == nil && n == 0
		}, 10*time.Second, 5*time.Millisecond, "the killed backend's lock is released")
		_, err = log.Append(ctx(), rem("two"))
		require.ErrorIs(t, err, harness.CodeClosed)
		assert.ErrorContains(t, err, "open the session again")
		_, err = log.Append(ctx(), rem("three"))
		require.ErrorIs(t, err, harness.CodeClosed, "the failure sticks")

		log2, tr, err := s.Open(ctx(), "killed")
		require.NoError(t, err, "the lock went with the connection")
		defer log2.Close()
		require.Len(t, tr.Events, 1)
		evs, err := log2.Append(ctx(), rem("after"))
		require.NoError(t, err)
		assert.Equal(t, int64(2), evs[0].Seq)
	})

	t.Run("WrittenElsewhere", func(t *testing.T) {
		log, err := s.Create(ctx(), session.Header{ID: "moved", Cwd: "/w"})
		require.NoError(t, err)
		defer log.Close()
		_, err = log.Append(ctx(), rem("one"))
		require.NoError(t, err)
		// Another writer (one that wrongly believed it held the lock)
		// moved the session on.
		_, err = pool.Exec(ctx(), `UPDATE harness_sessions SET next_seq = next_seq + 1 WHERE id = 'moved'`)
		require.NoError(t, err)
		_, err = log.Append(ctx(), rem("two"), rem("three"))
		require.ErrorIs(t, err, harness.CodeLocked)
		tr, err := s.Load(ctx(), "moved")
		require.NoError(t, err)
		assert.Len(t, tr.Events, 1, "nothing of the fenced append was written")
	})
}

// Rows that do not decode, of a type this build does not know, or longer
// than the maximum line size are each reported in a warning naming the
// event's seq and its line, as a JSONL log's lines are, and the rest is
// read.
func TestLoadWarnsOfBadRows(t *testing.T) {
	pool, _ := newSchema(t)
	s, err := postgres.New(ctx(), pool, postgres.Config{MaxLineSize: 200})
	require.NoError(t, err)
	log, err := s.Create(ctx(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	id := log.Header().ID
	_, err = log.Append(ctx(), &session.UserMessage{Content: []harness.Block{{Type: harness.BlockText, Text: "first\n\"quoted\""}}})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	for seq, line := range map[int64]string{
		2: `{"seq":2,"time":"2026-12-01T09:00:00Z","type":"user","data":{"content":[`,
		3: `{"seq":3,"time":"2026-12-01T09:00:00Z","type":"novel","data":{"x":1}}`,
		4: `{"seq":4,"time":"2026-12-01T09:00:00Z","type":"user","data":{"content":[{"type":"text","text":"` + strings.Repeat("y", 300) + `"}]}}`,
		5: `{"seq":5,"time":"2026-12-01T09:00:00Z","type":"user","data":{"content":[{"type":"text","text":"last \u00e9"}]}}`,
	} {
		_, err := pool.Exec(ctx(), `INSERT INTO harness_events (session_id, seq, type, line, body) VALUES ($1, $2, 'user', $3, '')`, id, seq, []byte(line))
		require.NoError(t, err)
	}
	_, err = pool.Exec(ctx(), `UPDATE harness_sessions SET next_seq = 6 WHERE id = $1`, id)
	require.NoError(t, err)
	tr, err := s.Load(ctx(), id)
	require.NoError(t, err)
	var seqs []int64
	for _, e := range tr.Events {
		seqs = append(seqs, e.Seq)
	}
	assert.Equal(t, []int64{1, 3, 5}, seqs)
	assert.Equal(t, "first\n\"quoted\"", tr.Events[0].Data.(*session.UserMessage).Content[0].Text)
	assert.Equal(t, "novel", tr.Events[1].Data.(*session.Unknown).Type)
	assert.Equal(t, "last é", tr.Events[2].Data.(*session.UserMessage).Content[0].Text)
	require.Len(t, tr.Warnings, 3)
	assert.Equal(t, 3, tr.Warnings[0].Line)
	assert.Contains(t, tr.Warnings[0].Message, "unreadable event 2 skipped")
	assert.Equal(t, 4, tr.Warnings[1].Line)
	assert.Contains(t, tr.Warnings[1].Message, `event 3 has type "novel"`)
	assert.Equal(t, 5, tr.Warnings[2].Line)
	assert.Contains(t, tr.Warnings[2].Message, "event 4 of ")
	assert.Contains(t, tr.Warnings[2].Message, "more than the maximum line size of 200 bytes")
}
