// Command starter runs one durable turn of a session on the workers of a
// task queue and prints its answer:
//
//	starter -postgres "$HARNESS_POSTGRES_URL" -session demo "effects=2 steps=2 sleep=500"
//
// The turn's number is the session's next one, read from the session
// log in PostgreSQL (or given with -turn); starting a turn that runs
// already waits for that run. The answer, the calls and how each ended
// are printed when the turn ends, whichever workers ran it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/examples/temporal/turns"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "starter:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func run() error {
	addr := flag.String("temporal", envOr("TEMPORAL_ADDRESS", client.DefaultHostPort), "Temporal frontend, host:port")
	namespace := flag.String("namespace", client.DefaultNamespace, "Temporal namespace")
	queue := flag.String("task-queue", turns.DefaultTaskQueue, "task queue of the workers")
	pgURL := flag.String("postgres", os.Getenv("HARNESS_POSTGRES_URL"), "PostgreSQL connection URL of the session store (to number the turn)")
	id := flag.String("session", "", "session id (created by its first turn)")
	turn := flag.Int("turn", 0, "turn number; 0 means the session's next turn")
	timeout := flag.Duration("timeout", 30*time.Minute, "how long the turn may take in all")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: starter [flags] -session ID PROMPT")
		flag.PrintDefaults()
	}
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if *id == "" || prompt == "" {
		flag.Usage()
		return errors.New("a session id and a prompt are needed")
	}
	ctx := context.Background()
	if *turn == 0 {
		n, err := nextTurn(ctx, *pgURL, *id)
		if err != nil {
			return err
		}
		*turn = n
	}
	c, err := client.Dial(client.Options{HostPort: *addr, Namespace: *namespace, Logger: quiet{}})
	if err != nil {
		return fmt.Errorf("connecting to Temporal at %s: %w", *addr, err)
	}
	defer c.Close()
	if *turn > 1 {
		// Turns of a session run one at a time: wait for the previous one
		// if it still runs (a turn started by other means has no such
		// workflow, which is fine).
		prev := turns.StartOptions(*queue, turns.TurnInput{SessionID: *id, Turn: *turn - 1}, 0).ID
		var nf *serviceerror.NotFound
		if err := c.GetWorkflow(ctx, prev, "").Get(ctx, nil); err != nil && !errors.As(err, &nf) {
			fmt.Fprintf(os.Stderr, "starter: the previous turn (%s) did not complete: %v\n", prev, err)
		}
	}
	in := turns.TurnInput{SessionID: *id, Turn: *turn, Prompt: prompt}
	run, err := c.ExecuteWorkflow(ctx, turns.StartOptions(*queue, in, *timeout), turns.WorkflowName, in)
	if err != nil {
		return err
	}
	fmt.Printf("turn %d of session %s: workflow %s, run %s\n", in.Turn, in.SessionID, run.GetID(), run.GetRunID())
	var res turns.TurnResult
	if err := run.Get(ctx, &res); err != nil {
		return err
	}
	for _, cr := range res.Calls {
		how := "ok"
		if cr.IsError {
			how = string(cr.Code)
		}
		fmt.Printf("  call %s %s: %s\n", cr.Name, cr.CallID, how)
	}
	steps := "steps"
	if res.Steps == 1 {
		steps = "step"
	}
	fmt.Printf("%s after %d %s: %s\n", res.Reason, res.Steps, steps, res.Answer)
	return nil
}

// nextTurn reads the session's log and returns the number of its next
// turn: 1 for a session not created yet.
func nextTurn(ctx context.Context, url, id string) (int, error) {
	if url == "" {
		return 0, errors.New("no session store to number the turn: pass -postgres, set HARNESS_POSTGRES_URL or pass -turn")
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	store, err := postgres.New(ctx, pool, postgres.Config{})
	if err != nil {
		return 0, err
	}
	tr, err := store.Load(ctx, id)
	if errors.Is(err, harness.CodeNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	return new(session.History).Add(tr.Events...).Turns() + 1, nil
}

// quiet discards the Temporal client's log.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
