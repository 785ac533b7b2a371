// Command starter runs one durable turn of a session on the workers of a
// task queue and prints its events and its answer:
//
//	starter -session demo "effects=2 steps=2 sleep=500"
//
// A turn that waits for approval is approved (with -approve) or denied,
// so the demo runs without a terminal. The turn's number is the
// session's next one; a session runs one turn at a time.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/go-harness/harness/agent"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
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
	queue := flag.String("task-queue", temporal.DefaultTaskQueue, "task queue of the workers")
	id := flag.String("session", "", "session id (created by its first turn)")
	approve := flag.Bool("approve", false, "approve the calls a paused turn asks about (deny them otherwise)")
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
	c, err := client.Dial(client.Options{HostPort: *addr, Namespace: *namespace, Logger: quiet{}})
	if err != nil {
		return fmt.Errorf("connecting to Temporal at %s: %w", *addr, err)
	}
	defer c.Close()
	tc := temporal.NewClient(c, temporal.ClientConfig{TaskQueue: *queue})
	turn, err := tc.Start(ctx, temporal.TurnInput{SessionID: *id, Create: &session.Header{}, Prompt: prompt, Stream: true, Timeout: *timeout})
	if err != nil {
		return err
	}
	fmt.Printf("session %s: workflow %s, run %s\n", turn.SessionID, turn.WorkflowID, turn.RunID)
	for ev, err := range turn.Events(ctx) {
		if err != nil {
			return err
		}
		switch ev.Type {
		case "text_delta", "reasoning_delta", "tool_call_progress":
			continue
		case "approval_request":
			st, err := turn.Status(ctx)
			if err != nil {
				return err
			}
			if st.Pause == nil {
				continue
			}
			answers := map[string]permission.Answer{}
			for _, r := range st.Pause.Approvals {
				answers[r.Call.ID] = permission.Answer{Allow: *approve}
			}
			if err := turn.Answer(ctx, agent.Answers{Approvals: answers}); err != nil {
				return err
			}
		}
		fmt.Printf("  %s\n", ev.JSON)
	}
	res, err := turn.Wait(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("turn %d: %s after %d steps (moved %d times): %s\n", res.Turn, res.Reason, res.Steps, res.Moves, res.Answer)
	return nil
}

// quiet discards the Temporal client's log.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
