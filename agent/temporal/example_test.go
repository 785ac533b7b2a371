package temporal_test

import (
	"context"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
)

// A worker runs the turns of sessions configured as agent.New would
// configure them, on a session store every worker shares; a client
// starts turns and waits for them. (It needs a Temporal server and
// PostgreSQL, so it is compiled, not run.)
func Example() {
	ctx := context.Background()
	var m model.Model // your model, such as openai.New(...)
	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	pool, err := pgxpool.New(ctx, "postgres://harness@127.0.0.1:5432/harness")
	if err != nil {
		log.Fatal(err)
	}
	store, err := postgres.New(ctx, pool, postgres.Config{})
	if err != nil {
		log.Fatal(err)
	}
	w, err := temporal.NewWorker(temporal.Config{
		Client: c,
		Store:  store,
		Agent:  []agent.Option{agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: store})},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}
	defer w.Stop()

	tc := temporal.NewClient(c, temporal.ClientConfig{})
	turn, err := tc.Start(ctx, temporal.TurnInput{SessionID: "demo", Create: &session.Header{}, Prompt: "make the tests pass"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := turn.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Reason, res.Answer)
}
