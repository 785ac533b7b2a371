package temporal_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
)

// The servers the integration tests need; .ci/run starts both.
const (
	temporalEnv = "TEMPORAL_ADDRESS"
	postgresEnv = "HARNESS_POSTGRES_URL"
)

// servers returns the Temporal address and the PostgreSQL URL, or skips.
func servers(t testing.TB) (string, string) {
	t.Helper()
	addr, pg := os.Getenv(temporalEnv), os.Getenv(postgresEnv)
	if addr == "" || pg == "" {
		t.Skip(temporalEnv + " and " + postgresEnv + " must both be set: no Temporal dev server or PostgreSQL to run turns on (.ci/run starts them)")
	}
	return addr, pg
}

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// newSchema creates an empty schema, dropped when the test ends, and
// returns a URL whose connections use it and a store on it.
func newSchema(t testing.TB, base string) (string, session.Store) {
	t.Helper()
	ctx := context.Background()
	schema := randomName("t_")
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer admin.Close(ctx)
	if _, err = admin.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`); err != nil {
		// Two tests creating it at once: one wins, the other sees it.
		_, err = admin.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public`)
	}
	require.NoError(t, err)
	_, err = admin.Exec(ctx, `CREATE SCHEMA `+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			_, _ = c.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
			_ = c.Close(context.Background())
		}
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	pool, err := pgxpool.New(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store, err := postgres.New(ctx, pool, postgres.Config{})
	require.NoError(t, err)
	return u.String(), store
}

func dialTemporal(t testing.TB, addr string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: addr, Logger: quiet{}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// quiet discards the Temporal SDK's log.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
