package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
)

// urlEnv names the server the tests use; .ci/run starts one and sets it.
const urlEnv = "HARNESS_POSTGRES_URL"

func serverURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(urlEnv)
	if u == "" {
		t.Skip(urlEnv + " is not set: no PostgreSQL server to test against (.ci/run starts one)")
	}
	return u
}

func ctx() context.Context { return context.Background() }

// newSchema creates an empty schema on the test server, dropped when the
// test ends, and returns a pool whose connections use it.
func newSchema(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	u := serverURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	admin, err := pgx.Connect(ctx(), u)
	require.NoError(t, err)
	defer admin.Close(ctx())
	// The extension lives in public, once per database; each test's
	// tables live in a schema of their own.
	_, err = admin.Exec(ctx(), `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`)
	if err != nil {
		// Two tests creating it at once: one wins, the other sees it.
		_, err = admin.Exec(ctx(), `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`)
	}
	require.NoError(t, err)
	_, err = admin.Exec(ctx(), `CREATE SCHEMA `+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), u)
		if err == nil {
			_, _ = c.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
			c.Close(context.Background())
		}
	})
	return poolFor(t, u, schema), schema
}

// poolFor returns a pool whose connections use schema, closed when the
// test ends.
func poolFor(t testing.TB, u, schema string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(u)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
	pool, err := pgxpool.NewWithConfig(ctx(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// newStore returns a store in a new, empty schema.
func newStore(t testing.TB, cfg postgres.Config) session.Store {
	t.Helper()
	pool, _ := newSchema(t)
	s, err := postgres.New(ctx(), pool, cfg)
	require.NoError(t, err)
	return s
}
