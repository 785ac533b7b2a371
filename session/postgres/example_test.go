package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
)

// A session created on one worker and resumed on another: both reach the
// same database. (This example needs a server, so it is compiled, not
// run.)
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	store, err := postgres.New(ctx, pool, postgres.Config{}) // creates or migrates the schema
	if err != nil {
		panic(err)
	}

	log, err := store.Create(ctx, session.Header{Cwd: "/srv/project"})
	if err != nil {
		panic(err)
	}
	id := log.Header().ID
	_, err = log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock("fix the tests")}})
	if err != nil {
		panic(err)
	}
	log.Close()

	// On any worker: a second writer would get harness.CodeLocked.
	log, tr, err := store.Open(ctx, id)
	if err != nil {
		panic(err)
	}
	defer log.Close()
	fmt.Println(len(tr.Events), len(new(session.History).Add(tr.Events...).Messages()))
}
