package postgres_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
)

// An Open that fails after taking the session's lock (the session does
// not exist) releases the lock before it returns: a Create of the
// session right after succeeds, rather than calling it existing and
// open elsewhere because the server has not yet dropped the closed
// connection's lock (seen on a loaded machine, where a sub-agent's
// session was then never created). Likewise a Create that finds the
// session existing leaves it free to open at once.
func TestFailedOpenAndCreateReleaseTheLock(t *testing.T) {
	pool, _ := newSchema(t)
	s, err := postgres.New(ctx(), pool, postgres.Config{})
	require.NoError(t, err)
	// warm leaves two idle connections in the pool, so that the Create
	// after a failed Open needs no new one and asks for the lock at once.
	warm := func() {
		a, err := pool.Acquire(ctx())
		require.NoError(t, err)
		b, err := pool.Acquire(ctx())
		require.NoError(t, err)
		a.Release()
		b.Release()
	}
	for i := range 100 {
		id := fmt.Sprintf("free-%d", i)
		warm()
		_, _, err := s.Open(ctx(), id)
		require.ErrorIs(t, err, harness.CodeNotFound)
		l, err := s.Create(ctx(), session.Header{ID: id})
		require.NoError(t, err, "creating %s right after opening it failed", id)
		require.NoError(t, l.Close())

		warm()
		_, err = s.Create(ctx(), session.Header{ID: id})
		require.ErrorIs(t, err, harness.CodeExists)
		l, _, err = s.Open(ctx(), id)
		require.NoError(t, err, "opening %s right after a refused create", id)
		require.NoError(t, l.Close())
	}
}
