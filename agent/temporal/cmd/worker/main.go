// Command worker runs durable agent turns for Temporal (package
// temporal): it registers the turn workflow and its activities on a task
// queue, with session logs in PostgreSQL. Run as many as you like, on any machines
// that reach the Temporal server and the database; a turn whose worker
// dies goes on in another.
//
//	worker -postgres "$HARNESS_POSTGRES_URL" [-temporal 127.0.0.1:7233] [-fake-model]
//
// The model comes from the environment as openai.FromEnv reads it
// (DEEPSEEK_API_KEY, or HARNESS_BASE_URL with HARNESS_MODEL and
// HARNESS_API_KEY), or, with -fake-model, from a deterministic fake
// served on the loopback interface (package internal/fakemodel), so the
// example runs offline.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/agent/temporal/internal/effect"
	"github.com/go-harness/harness/agent/temporal/internal/fakemodel"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session/postgres"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
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
	queue := flag.String("task-queue", temporal.DefaultTaskQueue, "task queue to poll")
	pgURL := flag.String("postgres", os.Getenv("HARNESS_POSTGRES_URL"), "PostgreSQL connection URL of the session store")
	fake := flag.Bool("fake-model", false, "answer with the deterministic fake model instead of one from the environment")
	effects := flag.String("effects", "", "file the record_effect tool appends to (the tool is offered only when set)")
	workspace := flag.String("workspace", ".", "directory the read tool is confined to, and new sessions' working directory")
	gate := flag.String("gate", "", "a file holding a step number: record_effect calls of later steps wait, before their effect, until it holds theirs (a test writes it)")
	full := flag.Bool("full", false, "the kill test's full toolset: also approved_effect (asks for approval) and the sub-agent helper (record_effect only); needs -effects")
	ask := flag.String("ask", "", "a permission rule (such as record_effect) whose calls wait for approval")
	budgetTokens := flag.Int64("budget-tokens", 0, "the session's token budget (Limits.Budget.Session.Tokens): a turn that reaches it pauses for a raised budget")
	verbose := flag.Bool("v", false, "log activity of the worker and the Temporal client")
	flag.Parse()
	if *pgURL == "" {
		return errors.New("no session store: pass -postgres or set HARNESS_POSTGRES_URL")
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx := context.Background()

	pool, err := pgxpool.New(ctx, *pgURL)
	if err != nil {
		return fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	defer pool.Close()
	store, err := postgres.New(ctx, pool, postgres.Config{})
	if err != nil {
		return err
	}

	var m model.Model
	if *fake {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: fakemodel.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		m, err = openai.New(openai.Config{BaseURL: "http://" + ln.Addr().String(), APIKey: "unused", Model: fakemodel.Model})
		if err != nil {
			return err
		}
	} else {
		cfg, err := openai.FromEnv(os.Getenv)
		if err != nil {
			return fmt.Errorf("%w (or pass -fake-model)", err)
		}
		if m, err = openai.New(cfg); err != nil {
			return err
		}
	}

	root, err := filepath.Abs(*workspace)
	if err != nil {
		return err
	}
	fsys, err := fslocal.New(root)
	if err != nil {
		return err
	}
	defer fsys.Close()
	ts := []tools.Tool{files.Read(files.Config{}), files.Write(files.Config{}), files.Edit(files.Config{})}
	ts = append(ts, shell.Tools(shell.Config{})...)
	if *effects != "" {
		ts = append(ts, effect.New(effect.Config{Path: *effects, GateFile: *gate}))
	}
	opts := []agent.Option{
		agent.WithModel(m),
		agent.WithTools(ts...),
		agent.WithStores(agent.Stores{Sessions: store, Files: fsys}),
		agent.WithLogger(logger),
	}
	if *budgetTokens > 0 {
		opts = append(opts, agent.WithLimits(agent.Limits{Budget: agent.Budgets{Session: agent.Budget{Tokens: *budgetTokens}}}))
	}
	// Every tool is allowed, but for the one that asks: ask beats allow.
	allow := []string{"Bash", "Edit", "Write", "Read", "task"}
	for _, t := range ts {
		allow = append(allow, t.Spec().Name)
	}
	switch {
	case *full && *effects != "":
		opts[1] = agent.WithTools(append(ts, effect.Named("approved_effect", *effects))...)
		pol, err := permission.New(permission.Rules{Allow: allow, Ask: []string{"approved_effect"}})
		if err != nil {
			return err
		}
		opts = append(opts, agent.WithPermissions(pol), agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{
			Name: "helper", Description: "Records effects.", Tools: []string{"record_effect"},
		}}}))
	case *ask != "":
		// Calls of the named tool wait for approval: a durable pause.
		pol, err := permission.New(permission.Rules{Allow: allow, Ask: []string{*ask}})
		if err != nil {
			return err
		}
		opts = append(opts, agent.WithPermissions(pol))
	}

	c, err := client.Dial(client.Options{HostPort: *addr, Namespace: *namespace, Logger: tlog.NewStructuredLogger(logger)})
	if err != nil {
		return fmt.Errorf("connecting to Temporal at %s: %w", *addr, err)
	}
	defer c.Close()
	w, err := temporal.NewWorker(temporal.Config{Client: c, TaskQueue: *queue, Agent: opts, Store: store, Logger: logger})
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	fmt.Println("worker ready: polling", *queue)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return w.Stop()
}
