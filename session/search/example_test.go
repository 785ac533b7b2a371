package search_test

import (
	"context"
	"fmt"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/search"
)

func ExampleSearch() {
	ctx := context.Background()
	store := session.NewMemory(session.StoreConfig{})
	for _, s := range []struct{ id, cwd, text string }{
		{"fix-ci", "/home/u/app", "CI fails: \"connection reset by peer\"\nin the dialer"},
		{"other", "/home/u/other", "connection reset by peer, in another project"},
	} {
		log, _ := store.Create(ctx, session.Header{ID: s.id, Cwd: s.cwd})
		log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock(s.text)}})
		log.Close()
	}

	// Only the sessions of /home/u/app and the directories below it.
	matches, err := search.Search(ctx, store, search.Options{
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
