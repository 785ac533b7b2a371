package postgres_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
	"github.com/go-harness/harness/session/search"
)

// benchStores returns the stores a benchmark compares: the JSONL store
// (the baseline; its Append writes through to the file, and jsonl+sync
// also syncs it), PostgreSQL with its default durable commits, and
// PostgreSQL with synchronous_commit off (what a server crash may lose
// is the last moments, like JSONL without Sync).
func benchStores(b *testing.B) []struct {
	name string
	s    session.Store
	sync bool
} {
	pool, schema := newSchema(b)
	pg, err := postgres.New(ctx(), pool, postgres.Config{})
	require.NoError(b, err)
	cfg, err := pgxpool.ParseConfig(serverURL(b))
	require.NoError(b, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	async, err := pgxpool.NewWithConfig(ctx(), cfg)
	require.NoError(b, err)
	b.Cleanup(async.Close)
	pgAsync, err := postgres.New(ctx(), async, postgres.Config{})
	require.NoError(b, err)
	js := session.NewJSONL(b.TempDir(), session.StoreConfig{})
	return []struct {
		name string
		s    session.Store
		sync bool
	}{
		{"jsonl", js, false},
		{"jsonl+sync", js, true},
		{"postgres", pg, false},
		{"postgres_async_commit", pgAsync, false},
	}
}

// benchEvent is a tool result of about 1 KiB, a typical event.
func benchEvent(i int) session.Payload {
	return &session.ToolFinished{Step: i, CallID: fmt.Sprint("c", i), Name: "bash",
		Result: *harness.TextResult(strings.Repeat(fmt.Sprintf("line %d of the output\n", i), 48))}
}

// BenchmarkAppend appends one event per call; events/s is the
// throughput of one writer.
func BenchmarkAppend(b *testing.B) {
	for _, st := range benchStores(b) {
		b.Run(st.name, func(b *testing.B) {
			log, err := st.s.Create(ctx(), session.Header{Cwd: "/bench"})
			require.NoError(b, err)
			defer log.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := log.Append(ctx(), benchEvent(i)); err != nil {
					b.Fatal(err)
				}
				if st.sync {
					if err := log.Sync(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkResume opens a session of 10,000 events and reads it back
// whole, as resuming on another worker does.
func BenchmarkResume(b *testing.B) {
	const events = 10_000
	for _, st := range benchStores(b) {
		if st.sync {
			continue
		}
		b.Run(fmt.Sprintf("%s/events=%d", st.name, events), func(b *testing.B) {
			log, err := st.s.Create(ctx(), session.Header{Cwd: "/bench"})
			require.NoError(b, err)
			id := log.Header().ID
			batch := make([]session.Payload, 0, 500)
			for i := range events {
				batch = append(batch, benchEvent(i))
				if len(batch) == cap(batch) {
					_, err := log.Append(ctx(), batch...)
					require.NoError(b, err)
					batch = batch[:0]
				}
			}
			require.NoError(b, log.Close())
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				l, tr, err := st.s.Open(ctx(), id)
				if err != nil {
					b.Fatal(err)
				}
				if len(tr.Events) != events {
					b.Fatalf("%d events", len(tr.Events))
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearchRegex searches 200 sessions of 50 events for a regular
// expression one event in 500 matches, on JSONL beside PostgreSQL: the
// literal every match holds ("needle-") narrows the events read in SQL.
func BenchmarkSearchRegex(b *testing.B) {
	const sessions, perSession = 200, 50
	stores := benchStores(b)
	for _, st := range stores {
		if st.sync || st.name == "postgres_async_commit" {
			continue
		}
		for i := range sessions {
			log, err := st.s.Create(ctx(), session.Header{Cwd: "/bench"})
			require.NoError(b, err)
			batch := make([]session.Payload, perSession)
			for j := range batch {
				batch[j] = benchEvent(i*perSession + j)
				if (i*perSession+j)%500 == 7 {
					batch[j] = &session.UserMessage{Content: []harness.Block{{Type: harness.BlockText, Text: fmt.Sprintf("find needle-%d here", i)}}}
				}
			}
			_, err = log.Append(ctx(), batch...)
			require.NoError(b, err)
			require.NoError(b, log.Close())
		}
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				opts := search.Options{Query: `needle-\d+`, Regex: true, Workspace: "/bench", Limit: 1000}
				ms, err := search.Search(ctx(), st.s, opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(ms) != sessions*perSession/500 {
					b.Fatalf("%d matches", len(ms))
				}
			}
		})
	}
}
