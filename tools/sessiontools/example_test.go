package sessiontools_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/sessiontools"
)

func Example() {
	ctx := context.Background()
	store := session.NewMemory(session.StoreConfig{})
	log, _ := store.Create(ctx, session.Header{ID: "earlier", Cwd: "/home/u/app"})
	log.Append(ctx, &session.UserMessage{Content: []harness.Block{harness.TextBlock("the deploy key lives in vault/deploy")}})
	log.Close()

	// A host adds the tools to its loop with
	// agent.WithTools(sessiontools.Tools(store, sessiontools.Config{})...); here the search tool
	// (the first) is called directly, as the loop would call it.
	search := sessiontools.Tools(store, sessiontools.Config{})[0]
	res, err := search.Execute(ctx, &tools.Call{
		Name:      "session_search",
		Arguments: `{"query":"deploy key"}`,
		Env:       &tools.Env{SessionID: "current", Cwd: "/home/u/app"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for line := range strings.Lines(res.Text()) {
		if strings.HasPrefix(line, "  seq") {
			fmt.Print(line)
		}
	}
	// Output:
	//   seq 1 user: the deploy key lives in vault/deploy
}
