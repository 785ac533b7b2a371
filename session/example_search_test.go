package session_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

func ExampleSearch() {
	ctx := context.Background()
	store := session.NewMemory()
	for _, s := range []struct{ id, cwd, text string }{
		{"fix-ci", "/home/u/app", "CI fails: \"connection reset by peer\"\nin the dialer"},
		{"other", "/home/u/other", "connection reset by peer, in another project"},
	} {
		log, _ := store.Create(ctx, session.Header{ID: s.id, Cwd: s.cwd})
		log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock(s.text)}})
		log.Close()
	}

	// Only the sessions of /home/u/app and the directories below it.
	matches, err := session.Search(ctx, store, session.SearchOptions{
		Query:     "reset by peer\"\nin",
		Workspace: "/home/u/app",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range matches {
		fmt.Printf("%s seq %d %s: %q\n", m.Session.Header.ID, m.Seq, m.Type, m.Snippet)
	}
	// Output:
	// fix-ci seq 1 user: "CI fails: \"connection reset by peer\"\nin the dialer"
}

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
	r := session.NewRetention(store, session.WithSessionData(spills),
		session.WithClock(func() time.Time { return time.Now().Add(31 * 24 * time.Hour) }))
	rep, err := r.Prune(ctx, session.PruneOptions{OlderThan: 30 * 24 * time.Hour})
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
