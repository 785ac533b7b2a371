package session_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-harness/harness/session"
)

func ExampleRetention_Prune() {
	ctx := context.Background()
	store := session.NewMemory(session.StoreConfig{})
	log, _ := store.Create(ctx, session.Header{ID: "old-session", Cwd: "/w"})
	log.Close()

	// spills stands for the spill store, which deletes a session's saved
	// output with it.
	spills := fakeSpills{}
	r := &session.Retention{Store: store, DeleteData: spills.DeleteSession}
	deleted, err := r.Prune(ctx, session.PruneOptions{OlderThan: 30 * 24 * time.Hour, Now: time.Now().Add(31 * 24 * time.Hour)})
	if err != nil {
		fmt.Println(err)
	}
	for _, in := range deleted {
		fmt.Println("deleted", in.Header.ID)
	}
	// Output:
	// spills of old-session deleted
	// deleted old-session
}

// fakeSpills has the DeleteSession method of a spill.Store.
type fakeSpills struct{}

func (fakeSpills) DeleteSession(ctx context.Context, id string) error {
	fmt.Println("spills of", id, "deleted")
	return nil
}
