package session_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-harness/harness/session"
)

func ExampleRetention_Prune() {
	ctx := context.Background()
	store := session.NewMemory()
	log, _ := store.Create(ctx, session.Header{ID: "old-session", Cwd: "/w"})
	log.Close()

	// spills stands for the spill store, which deletes a session's saved
	// output with it.
	spills := deleterFunc(func(ctx context.Context, id string) error {
		fmt.Println("spills of", id, "deleted")
		return nil
	})
	r := &session.Retention{Store: store, Data: []session.SessionDataDeleter{spills}}
	rep, err := r.Prune(ctx, session.PruneOptions{OlderThan: 30 * 24 * time.Hour, Now: time.Now().Add(31 * 24 * time.Hour)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range rep.Deleted {
		fmt.Println("deleted", in.Header.ID)
	}
	// Output:
	// spills of old-session deleted
	// deleted old-session
}

type deleterFunc func(ctx context.Context, id string) error

func (f deleterFunc) DeleteSession(ctx context.Context, id string) error { return f(ctx, id) }
