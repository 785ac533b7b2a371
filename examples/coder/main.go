package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/shell"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	tuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	interrupts := make(chan os.Signal, 2)
	signal.Notify(interrupts, os.Interrupt)
	resize := make(chan os.Signal, 1)
	ui.NotifyResize(resize)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr, signals{interrupts: interrupts, resize: resize})
	stop()
	os.Exit(code)
}

// The collector's settings when the environment sets none: the heap
// may grow to gcPercent% more than what is live after a collection
// before the next one (the runtime's default is 100), and past
// gcMemoryLimit collections come sooner whatever gcPercent allows.
const (
	gcPercent     = 400
	gcMemoryLimit = 1 << 30
)

// tuneGC raises the garbage collector's target, unless GOGC or
// GOMEMLIMIT says otherwise. A headless turn allocates a few megabytes;
// at the default target (4 MB at first) the collector would run during
// it for nothing, as the process ends soon after. The memory limit
// bounds the heap the higher target allows.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(gcMemoryLimit)
	}
}

// signals are the signals the program follows: Ctrl-C, and the
// terminal's size changing (SIGWINCH).
type signals struct {
	interrupts <-chan os.Signal
	resize     <-chan os.Signal
}

// run is the whole program, with its surroundings passed in so tests can
// drive it in-process. sig.interrupts delivers Ctrl-C; ctx ending (SIGTERM)
// stops everything. It returns the exit status.
func run(ctx context.Context, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer, sig signals) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "coder: %v\nRun coder -h for the flags.\n", err)
		return exitUsage
	}
	if o == nil {
		return exitOK // -h
	}
	a := &app{o: o, env: env, stdin: stdin, stdout: stdout, stderr: stderr, sig: sig}
	code, err := a.main(ctx)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "coder: %v\n", ue.msg)
			return exitUsage
		}
		fmt.Fprintf(stderr, "coder: %v\n", err)
		return exitFailed
	}
	return code
}

// app is one run of the program.
type app struct {
	o      *options
	env    func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	sig    signals

	sessionsDir string
	root        string
	store       session.Store
	loop        *agent.Loop
	sess        *agent.Session
	logger      *slog.Logger
	view        ui.View
	console     *ui.Console
	sandboxed   shell.Sandbox
	fsys        fs.FileSystem
	proj        *project
	closers     []func()     // what wire started, closed after the loop
	statusLines []string     // the MCP servers' lines for the banner
	mcpEvents   ui.MCPEvents // shows the MCP servers' events once the view is up
	// lastCode is the error code that ended the last turn, if any.
	lastCode harness.Code
}

// main wires the agent: the model, the stores, the tools and their
// guards, the permission policy and the MCP servers; then it runs one
// turn or the prompt loop.
func (a *app) main(ctx context.Context) (int, error) {
	var logger *slog.Logger
	if a.o.verbose {
		logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if a.o.hist.list {
		return a.listSessions(ctx)
	}
	model, baseURL, err := a.model(logger)
	if err != nil {
		return 0, err
	}
	if c, ok := model.(interface{ CloseIdleConnections() }); ok {
		defer c.CloseIdleConnections()
	}
	resumeID, err := a.openStore(ctx)
	if err != nil {
		return 0, err
	}
	fsys, err := fslocal.New(a.root)
	if err != nil {
		return 0, usagef("workspace %s: %v", a.root, err)
	}
	defer fsys.Close()
	a.root = fsys.Root()

	a.fsys = fsys
	defer a.closeAll() // after the loop is closed
	opts, err := a.wire(ctx, logger, model, fsys)
	if err != nil {
		return 0, err
	}
	loop, err := agent.New(opts...)
	if err != nil {
		return 0, err
	}
	defer loop.Close()
	// The loop closes when ctx ends (an interrupt): running turns are
	// cancelled and tool state such as shell sessions is reaped.
	stop := context.AfterFunc(ctx, func() { loop.Close() })
	defer stop()

	a.loop, a.logger = loop, logger
	if a.sess, err = a.openSession(ctx, loop, resumeID); err != nil {
		return 0, err
	}

	a.view, a.console = ui.Open(ui.Config{In: a.stdin, Out: a.stdout, ErrOut: a.stderr, Interrupts: a.sig.interrupts, Resize: a.sig.resize,
		Getenv: a.env, JSON: a.o.json, Reasoning: a.o.reasoning, Root: a.root, Verbose: a.o.verbose, DiffNote: diagnosticsNote, SpillDir: filepath.Join(a.sessionsDir, "spill")})
	defer a.view.Close()
	info, h := model.Info(), a.sess.Header()
	a.view.Banner(ui.BannerInfo{
		Model: info.Name, BaseURL: baseURL, Workspace: a.root,
		SessionID: h.ID, Cwd: h.Cwd, Resumed: resumeID != "",
		Messages: len(a.sess.Messages()), Warnings: a.sess.Warnings(),
	})
	a.showProject(ctx)
	ui.ShowStatus(a.view, a.statusLines)
	a.mcpEvents.Attach(a.view)
	defer a.mcpEvents.Attach(nil) // before the view closes

	var code int
	a.showRecap()
	if a.o.hist.rewind != "" {
		if code = a.rewindFlag(ctx); code != exitOK || !a.o.hasPrompt {
			return code, nil
		}
	}
	if a.o.perm.approve != "" || a.o.perm.reject != "" {
		if code, err = a.resolve(ctx); err != nil {
			return 0, err
		}
		if !a.o.hasPrompt || code != exitOK {
			return code, nil
		}
	}
	if code, handled, err := a.continuePaused(ctx); err != nil {
		return 0, err
	} else if handled && (!a.o.hasPrompt || code != exitOK) {
		return code, nil
	}
	if a.o.hasPrompt {
		code, _ = a.turn(ctx, a.o.prompt, true)
	} else {
		code = a.promptLoop(ctx)
	}
	id := a.sess.Header().ID // a new one after /clear
	a.view.Notice(ui.NoticeInfo, fmt.Sprintf("session %s · resume with -resume %s, or -continue in %s", id, id, a.root))
	return code, nil
}

// turn runs one turn and shows it. It returns the exit status of the
// turn and whether the user asked to exit (a second Ctrl-C while the
// turn was cancelling, or the program being stopped).
func (a *app) turn(ctx context.Context, prompt string, echo bool) (code int, exit bool) {
	return a.runTurn(ctx, prompt, echo, func(c context.Context) iter.Seq2[agent.Event, error] { return a.sess.Run(c, prompt) })
}

// runTurn runs the turn start begins (a new one, or a paused one
// resolved) and shows it, while the console follows the user.
func (a *app) runTurn(ctx context.Context, prompt string, echo bool, start func(context.Context) iter.Seq2[agent.Event, error]) (code int, exit bool) {
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.view.BeginTurn(prompt, echo)

	a.lastCode = ""
	var end *agent.TurnEnd
	var endErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range start(turnCtx) {
			a.view.Event(ev)
			switch e := ev.(type) {
			case *agent.ContextLoaded:
				a.showContextLoaded(e)
			}
			if e, ok := ev.(*agent.TurnEnd); ok {
				end, endErr = e, err
			} else if err != nil {
				endErr = err
			}
		}
	}()
	if a.console.WaitTurn(ctx, done, cancel) || ctx.Err() != nil {
		return exitInterrupted, true
	}
	if end == nil {
		a.view.Notice(ui.NoticeError, "error: "+ui.ErrorText(endErr))
		return exitFailed, false
	}
	switch end.Reason {
	case session.ReasonCompleted:
		return exitOK, false
	case session.ReasonAwaitingApproval:
		a.showPending()
		return exitPaused, true
	case session.ReasonAwaitingInput:
		a.showQuestions()
		return exitPaused, true
	case session.ReasonAwaitingBudget:
		return a.budgetPaused(ctx)
	case session.ReasonCancelled:
		a.view.Notice(ui.NoticeWarn, "turn cancelled; it is kept in the session log")
		return exitInterrupted, false
	case session.ReasonStepLimit:
		a.view.Notice(ui.NoticeWarn, fmt.Sprintf("the turn stopped at the step limit (%d model calls); ask the agent to go on, or raise -max-steps", end.Steps))
		return exitFailed, false
	}
	a.lastCode = harness.CodeOf(endErr)
	a.reportError(endErr)
	return exitFailed, false
}

// promptLoop reads prompts until end of input, /exit or Ctrl-C at the
// prompt, running one turn for each. When stdin and stdout are a
// terminal, lines are edited in place with a history kept per workspace.
func (a *app) promptLoop(ctx context.Context) int {
	defer a.console.Close()
	interactive := ui.IsTerminal(a.stdin) && !a.o.json
	if interactive && ui.IsTerminal(a.stdout) {
		if err := a.console.OpenTerminal(ui.HistoryPath(a.sessionsDir, a.root)); err != nil {
			a.view.Notice(ui.NoticeWarn, "line editing is off: "+err.Error())
		}
	}
	if a.console.Terminal() {
		a.console.Steer(a.steer)
	}
	code := exitOK
	if interactive {
		var quit bool
		if code, quit = a.resumePaused(ctx); quit {
			return code
		}
	}
	for {
		prompt, ok, exit := a.console.ReadPrompt(ctx, interactive)
		if exit || !ok {
			return code
		}
		var quit bool
		if strings.TrimSpace(prompt) == "" && len(a.sess.Queued()) > 0 {
			// Enter at an empty prompt runs what waits.
			if code, quit = a.runQueued(ctx, exitOK); quit {
				return code
			}
			continue
		}
		if handled, leave := a.command(ctx, prompt); leave {
			return code
		} else if handled {
			continue
		}
		// A failure that will recur on the next turn (fatal) ends the loop.
		if code, quit = a.turn(ctx, prompt, !interactive); quit || code == exitFailed && fatal(a.lastCode) {
			return code
		}
		if code, quit = a.runQueued(ctx, code); quit {
			return code
		}
	}
}
