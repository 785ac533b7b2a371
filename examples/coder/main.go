package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/images"
	"github.com/go-harness/harness/tools/sessiontools"
	"github.com/go-harness/harness/tools/shell"
)

// spillRetention is how long saved tool outputs are kept.
const spillRetention = 30 * 24 * time.Hour

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	interrupts := make(chan os.Signal, 2)
	signal.Notify(interrupts, os.Interrupt)
	resize := make(chan os.Signal, 1)
	notifyResize(resize)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr, signals{interrupts: interrupts, resize: resize})
	stop()
	os.Exit(code)
}

// options are the parsed command line.
type options struct {
	dir       string
	prompt    string
	hasPrompt bool
	resume    string
	cont      bool
	sessions  string
	json      bool
	maxSteps  int
	explore   bool
	model     string
	image     bool
	window    int
	context   string
	reasoning bool
	verbose   bool
	perm      permFlags
	mcp       mcpFlags
	prov      providerFlags
}

const usageText = `usage: coder [flags] [prompt]

A coding agent in the workspace directory. With a prompt it runs one turn
and exits; without one it reads prompts from stdin, one per line.

The model: DEEPSEEK_API_KEY for DeepSeek, or HARNESS_BASE_URL,
HARNESS_API_KEY and HARNESS_MODEL for any OpenAI-compatible endpoint.
DEEPSEEK_BASE_URL points DeepSeek at another host; HARNESS_DIALECT
(deepseek, openai or generic) overrides the dialect guessed from the URL.
` + providerUsage + `
flags:
`

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// parseFlags parses args. The flag package prints its own complaints and
// the usage to stderr; a nil options with a nil error means -h.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fset := flag.NewFlagSet("coder", flag.ContinueOnError)
	// The flag package would print the whole usage after every mistake;
	// run prints one line instead, and -h prints the usage.
	fset.SetOutput(io.Discard)
	fset.StringVar(&o.dir, "C", "", "workspace `dir`ectory the agent works in (default the current directory)")
	fset.StringVar(&o.prompt, "p", "", "run one turn on `prompt` and exit (or give the prompt after the flags)")
	fset.StringVar(&o.resume, "resume", "", "resume the session with this `id`")
	fset.BoolVar(&o.cont, "continue", false, "resume the latest session of the workspace")
	fset.StringVar(&o.sessions, "sessions", "", "`dir`ectory of session logs (default $XDG_DATA_HOME/harness/sessions or the OS equivalent)")
	fset.BoolVar(&o.json, "json", false, "write every event as one JSON line on stdout")
	fset.BoolVar(&o.explore, "explore", true, "give the model a read-only explore sub-agent (the task tool)")
	fset.IntVar(&o.maxSteps, "max-steps", 0, "stop a turn after `n` model calls (default 200, the loop's)")
	fset.StringVar(&o.model, "model", "", "model `id` (overrides HARNESS_MODEL)")
	fset.BoolVar(&o.image, "image", false, "the model accepts image input (for models the catalog does not know)")
	fset.IntVar(&o.window, "context-window", 0, "the model's context window in `tokens` (for models the catalog does not know; pruning and compaction need it)")
	fset.StringVar(&o.context, "context", "cost", contextFlagUsage)
	fset.BoolVar(&o.reasoning, "reasoning", true, "show the model's reasoning (dimmed; without colour each line starts with "+reasoningMark+")")
	fset.BoolVar(&o.verbose, "v", false, "log diagnostics to stderr")
	o.perm.register(fset)
	o.mcp.register(fset)
	o.prov.register(fset)
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fset.SetOutput(stderr)
			fmt.Fprint(stderr, usageText)
			fset.PrintDefaults()
			return nil, nil
		}
		return nil, &usageError{msg: err.Error()}
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) {
		set[f.Name] = true
		if f.Name == "p" {
			o.hasPrompt = true
		}
	})
	if rest := fset.Args(); len(rest) > 0 {
		if o.hasPrompt {
			return nil, usagef("give the prompt either with -p or after the flags, not both (flags go before the prompt)")
		}
		o.prompt, o.hasPrompt = strings.Join(rest, " "), true
	}
	if o.hasPrompt && strings.TrimSpace(o.prompt) == "" {
		return nil, usagef("the prompt is empty")
	}
	if o.resume != "" && o.cont {
		return nil, usagef("-resume and -continue both pick a session: give one of them")
	}
	if o.maxSteps < 0 {
		return nil, usagef("-max-steps must be positive, not %d", o.maxSteps)
	}
	if o.window < 0 {
		return nil, usagef("-context-window must be positive, not %d", o.window)
	}
	if _, err := contextPolicy(o.context); err != nil {
		return nil, err
	}
	if err := o.perm.check(o, set); err != nil {
		return nil, err
	}
	return o, nil
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
	a := &app{o: o, env: env, stdin: stdin, stdout: stdout, stderr: stderr, interrupts: sig.interrupts, resize: sig.resize}
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
	o          *options
	env        func(string) string
	stdin      io.Reader
	stdout     io.Writer
	stderr     io.Writer
	interrupts <-chan os.Signal
	resize     <-chan os.Signal

	// term is the terminal the prompt loop edits lines on; nil when
	// stdin or stdout is not a terminal.
	term        *terminal
	sessionsDir string

	view  view
	sess  *agent.Session
	store session.Store
	root  string
	// lastCode is the error code that ended the last turn, if any.
	lastCode harness.Code
	// lines are stdin's lines, shared by the prompt loop and the
	// approver.
	lines     <-chan string
	linesOnce sync.Once
	sandboxed shell.Sandbox
	// mcpEvents shows the MCP servers' events once the view is up.
	mcpEvents mcpEvents
}

func (a *app) main(ctx context.Context) (int, error) {
	var logger *slog.Logger
	if a.o.verbose {
		logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	model, baseURL, err := a.model(logger)
	if err != nil {
		return 0, err
	}
	if c, ok := model.(interface{ CloseIdleConnections() }); ok {
		defer c.CloseIdleConnections()
	}

	sessionsDir := a.o.sessions
	if sessionsDir == "" {
		if sessionsDir, err = defaultSessionsDir(a.env); err != nil {
			return 0, usagef("%v; name a directory for session logs with -sessions", err)
		}
	}
	if sessionsDir, err = filepath.Abs(sessionsDir); err != nil {
		return 0, err
	}
	a.store = session.NewJSONL(sessionsDir, session.StoreConfig{})
	a.sessionsDir = sessionsDir

	resumeID, err := a.pickSession(ctx)
	if err != nil {
		return 0, err
	}
	fsys, err := fslocal.New(a.root)
	if err != nil {
		return 0, usagef("workspace %s: %v", a.root, err)
	}
	defer fsys.Close()
	a.root = fsys.Root()

	spillStore, err := spill.NewDir(filepath.Join(sessionsDir, "spill"), spill.StoreConfig{})
	if err != nil {
		return 0, err
	}
	spilling, err1 := spill.Middleware(spill.Config{})
	deadlines, err2 := guard.Deadlines(guard.DeadlineConfig{})
	repeats, err3 := guard.RepeatGuard(guard.RepeatConfig{})
	failures, err4 := guard.FailureGuard(guard.FailureConfig{})
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return 0, err
	}
	if n, err := spillStore.Expire(ctx, time.Now().Add(-spillRetention)); err != nil && logger != nil {
		logger.Warn("removing old spilled outputs failed", "error", err)
	} else if n > 0 && logger != nil {
		logger.Debug("removed old spilled outputs", "count", n)
	}
	mcpSet, mcpLines, err := a.connectMCP(ctx, logger)
	if err != nil {
		return 0, err
	}
	defer mcpSet.Close()
	withImages := slices.Contains(model.Info().Input, harness.ModalityImage)
	pol, err := a.policy()
	if err != nil {
		return 0, err
	}
	if a.sandboxed, err = a.sandbox(pol); err != nil {
		return 0, err
	}
	opts := []agent.Option{
		agent.WithPermissions(pol),
		agent.WithApprover(a.approver()),
		agent.WithToolSource(mcpSet),
		agent.WithModel(model),
		agent.WithStores(agent.Stores{
			Sessions:    a.store,
			Files:       fsys,
			Output:      spillStore,
			Attachments: attachments.NewFiles(filepath.Join(a.sessionsDir, "attachments")),
		}),
		agent.WithTools(a.tools(withImages)...),
		agent.WithHooks(agent.Hooks{
			// Spill outermost, so output cut short by a deadline is still
			// saved whole.
			Tools: []tools.Middleware{spilling, deadlines},
			Steps: []tools.StepObserver{repeats, failures},
		}),
		agent.WithContextPolicy(policyOf(a.o.context)),
		agent.WithSystemPrompt(systemPrompt(a.root, withImages)),
		agent.WithPrices(pricing.Builtin()),
	}
	if a.o.explore {
		opts = append(opts, agent.WithSubAgents(subAgents()))
	}
	if a.o.maxSteps > 0 {
		opts = append(opts, agent.WithLimits(agent.Limits{MaxSteps: a.o.maxSteps}))
	}
	if logger != nil {
		opts = append(opts, agent.WithLogger(logger))
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

	if resumeID != "" {
		a.sess, err = loop.ResumeSession(ctx, resumeID)
		if errors.Is(err, harness.CodeLocked) {
			return 0, usagef("session %s is open in another coder; close that one first", resumeID)
		}
	} else {
		a.sess, err = loop.NewSession(ctx, session.Header{Cwd: a.root})
	}
	if err != nil {
		return 0, err
	}

	stdoutTTY := isTerminal(a.stdout)
	if a.o.json {
		a.view = &jsonView{out: a.stdout, errOut: a.stderr}
	} else {
		a.view = newHuman(a.stdout, humanOptions{
			Color:     colorEnabled(stdoutTTY, a.env),
			Spinner:   stdoutTTY,
			Reasoning: a.o.reasoning,
			Root:      a.root,
			Width:     a.width(),
		})
	}
	defer a.view.close()
	info := model.Info()
	h := a.sess.Header()
	a.view.banner(bannerInfo{
		Model: info.Name, BaseURL: baseURL, Workspace: a.root,
		SessionID: h.ID, Cwd: h.Cwd, Resumed: resumeID != "",
		Messages: len(a.sess.Messages()), Warnings: a.sess.Warnings(),
	})
	a.showMCP(mcpLines)
	a.mcpEvents.attach(a.view)
	defer a.mcpEvents.attach(nil) // before the view closes

	var code int
	if a.o.perm.approve != "" || a.o.perm.reject != "" {
		if code, err = a.resolve(ctx); err != nil {
			return 0, err
		}
		if !a.o.hasPrompt || code != exitOK {
			return code, nil
		}
	}
	if a.o.hasPrompt {
		code, _ = a.turn(ctx, a.o.prompt, true)
	} else {
		code = a.promptLoop(ctx)
	}
	a.view.notice(noticeInfo, fmt.Sprintf("session %s · resume with -resume %s, or -continue in %s", h.ID, h.ID, a.root))
	return code, nil
}

// pickSession sets the workspace root and returns the id of the session
// to resume, or "" for a new one.
func (a *app) pickSession(ctx context.Context) (string, error) {
	if a.o.dir != "" {
		root, err := filepath.Abs(a.o.dir)
		if err != nil {
			return "", usagef("-C %s: %v", a.o.dir, err)
		}
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			return "", usagef("-C %s: not a directory", a.o.dir)
		}
		a.root = root
	}
	switch {
	case a.o.resume != "":
		tr, err := a.store.Load(ctx, a.o.resume)
		if errors.Is(err, harness.CodeInvalidID) {
			return "", usagef("%q is not a session id", a.o.resume)
		}
		if errors.Is(err, harness.CodeNotFound) {
			return "", usagef("no session %s in %s", a.o.resume, a.sessionsDir)
		}
		if err != nil {
			return "", err
		}
		cwd := filepath.FromSlash(tr.Header.Cwd)
		if a.root == "" {
			a.root = cwd
		} else if !session.Below(tr.Header.Cwd, filepath.ToSlash(a.root)) {
			return "", usagef("session %s worked in %s, outside %s; run it with -C %s", a.o.resume, cwd, a.root, cwd)
		}
		return a.o.resume, nil
	case a.o.cont:
		if err := a.defaultRoot(); err != nil {
			return "", err
		}
		infos, err := a.store.List(ctx, session.ListOptions{Workspace: filepath.ToSlash(a.root)})
		if err != nil {
			return "", err
		}
		id, ok := latestTopSession(infos)
		if !ok {
			return "", usagef("no earlier session in %s to continue; start one without -continue", a.root)
		}
		return id, nil
	}
	return "", a.defaultRoot()
}

func (a *app) defaultRoot() error {
	if a.root != "" {
		return nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return usagef("the current directory: %v; name the workspace with -C", err)
	}
	a.root = wd
	return nil
}

// tools returns the agent's tools, in a stable order (the request prefix
// stays byte-stable for prompt caching). read_image is offered only to a
// model that declares image input: any other would see it refuse every
// call.
func (a *app) tools(withImages bool) []tools.Tool {
	ts := files.Tools()
	ts = append(ts, codesearch.Tools()...)
	if withImages {
		ts = append(ts, images.ReadImage())
	}
	ts = append(ts, shell.Tools(shell.WithProcess(shell.Process{Sandbox: a.sandboxed, Env: goCacheEnv(a.env), PassEnv: goPassEnv}))...) // a nil sandbox: unconfined
	ts = append(ts, sessiontools.Tools(a.store)...)
	return ts
}

// systemPrompt tells the model where it is and how to work.
func systemPrompt(root string, withImages bool) string {
	lookAtImages := ""
	if withImages {
		lookAtImages = "\n- Look at images (screenshots, diagrams, rendered output) with read_image."
	}
	return `You are coder, a careful coding agent working for the user in the workspace ` + filepath.ToSlash(root) + ` on ` + runtime.GOOS + `.

Work in small, checked steps:
- Read a file before you change it. Use edit for changes to existing files and write for new files; keep changes minimal and in the style of the surrounding code.` + lookAtImages + `
- Run commands with bash: builds, tests, git, searches (rg or grep). Use shell_open and shell_send when state must persist between commands (a running server, a virtualenv); background jobs for long-running processes.
- Large outputs are saved whole; when a result says so, page through it with read using offset and limit instead of running the command again.
- When the user refers to earlier work, find it with session_search and session_read (earlier sessions in this workspace).
- When a reminder says you are repeating yourself or failing, stop and change your approach.
- Verify your work (build, run the tests) before you say it is done.

Answer briefly: what you changed, how you checked it, and anything the user must decide.`
}

// turn runs one turn and shows it. It returns the exit status of the
// turn and whether the user asked to exit (a second Ctrl-C while the
// turn was cancelling, or the program being stopped).
func (a *app) turn(ctx context.Context, prompt string, echo bool) (code int, exit bool) {
	return a.runTurn(ctx, prompt, echo, func(c context.Context) iter.Seq2[agent.Event, error] { return a.sess.Run(c, prompt) })
}

// runTurn runs the turn start begins (a new one, or a paused one
// resolved) and shows it.
func (a *app) runTurn(ctx context.Context, prompt string, echo bool, start func(context.Context) iter.Seq2[agent.Event, error]) (code int, exit bool) {
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.view.beginTurn(prompt, echo)

	a.lastCode = ""
	var end *agent.TurnEnd
	var endErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range start(turnCtx) {
			a.view.event(ev)
			if d, ok := ev.(*agent.PermissionDecision); ok {
				a.showDecision(d)
			}
			if e, ok := ev.(*agent.TurnEnd); ok {
				end, endErr = e, err
			} else if err != nil {
				endErr = err
			}
		}
	}()

	cancelling := false
	var keys <-chan []byte
	var asks <-chan askLine
	if a.term != nil {
		keys, asks = a.term.keys, a.term.asks
	}
wait:
	for {
		select {
		case <-done:
			break wait
		case q := <-asks:
			line, interrupted := a.answerLine(ctx, q.prompt)
			q.reply <- line
			if interrupted && !cancelling {
				cancelling = true
				cancel()
				a.view.notice(noticeWarn, "cancelling the turn… (Ctrl-C again to exit)")
			}
		case b, ok := <-keys:
			// Typed ahead: kept, unseen, for the next prompt.
			if !ok {
				a.term.eof, keys = true, nil
				continue
			}
			a.term.typeahead = append(a.term.typeahead, b...)
		case <-a.resize:
			a.view.setWidth(a.width())
		case <-a.interrupts:
			if cancelling {
				a.view.notice(noticeWarn, "exiting")
				cancel()
				<-done
				return exitInterrupted, true
			}
			cancelling = true
			cancel()
			a.view.notice(noticeWarn, "cancelling the turn… (Ctrl-C again to exit)")
		case <-ctx.Done():
			cancel()
			<-done
			return exitInterrupted, true
		}
	}
	if ctx.Err() != nil {
		return exitInterrupted, true
	}
	if end == nil {
		a.view.notice(noticeError, "error: "+errorText(endErr))
		return exitFailed, false
	}
	switch end.Reason {
	case session.ReasonCompleted:
		return exitOK, false
	case session.ReasonAwaitingApproval:
		a.showPending()
		return exitPaused, true
	case session.ReasonCancelled:
		a.view.notice(noticeWarn, "turn cancelled; it is kept in the session log")
		return exitInterrupted, false
	case session.ReasonStepLimit:
		a.view.notice(noticeWarn, fmt.Sprintf("the turn stopped at the step limit (%d model calls); ask the agent to go on, or raise -max-steps", end.Steps))
		return exitFailed, false
	}
	a.lastCode = harness.CodeOf(endErr)
	a.reportError(endErr)
	return exitFailed, false
}

// reportError says what failed, with the error's code and what to do.
func (a *app) reportError(err error) {
	if err == nil {
		err = errors.New("the turn failed")
	}
	code := harness.CodeOf(err)
	msg := fmt.Sprintf("error [%s]: %v", code, err)
	if hint := errorHint(code); hint != "" {
		msg += "\n" + hint
	}
	fmt.Fprintln(a.stderr, msg)
}

// errorHint says what a person can do about a model failure.
func errorHint(code harness.Code) string {
	switch code {
	case harness.CodeAuth:
		return "The provider refused the API key: check DEEPSEEK_API_KEY (DeepSeek) or HARNESS_API_KEY and HARNESS_BASE_URL."
	case harness.CodeInsufficientBalance:
		return "The account has no credit left: top it up with the provider."
	case harness.CodeRateLimit, harness.CodeServer:
		return "The provider is busy; try again in a while (the session can be resumed)."
	case harness.CodeTransport:
		return "The connection to the provider failed; check the network or the base URL."
	case harness.CodeContextWindowExceeded:
		return "The conversation no longer fits the model's context window; start a new session."
	case harness.CodeInvalidRequest:
		return "The provider rejected the request; the model id or the endpoint may be wrong."
	}
	return ""
}

// fatal reports whether a failure will recur on the next turn.
func fatal(code harness.Code) bool {
	return code == harness.CodeAuth || code == harness.CodeInsufficientBalance
}

// promptLoop reads prompts from stdin until end of input, /exit or
// Ctrl-C at the prompt, running one turn for each. When stdin and stdout
// are a terminal, lines are edited in place with a history kept per
// workspace (see lineedit.go).
func (a *app) promptLoop(ctx context.Context) int {
	var lines chan string
	stop := make(chan struct{})
	defer close(stop)
	interactive := isTerminal(a.stdin) && !a.o.json
	if interactive && isTerminal(a.stdout) {
		if err := a.openTerminal(); err != nil {
			a.view.notice(noticeWarn, "line editing is off: "+err.Error())
		} else {
			defer a.term.close()
		}
	}
	if a.term == nil {
		lines = make(chan string)
		go readLines(a.stdin, lines, stop)
		a.linesOnce.Do(func() { a.lines = lines })
	}
	code := exitOK
	for {
		prompt, ok, exit := a.readPrompt(ctx, lines, interactive)
		if exit || !ok {
			return code
		}
		switch strings.TrimSpace(prompt) {
		case "":
			continue
		case "/exit", "/quit":
			return code
		case "/help":
			a.view.notice(noticeInfo, "Type a prompt and press Enter; end a line with \\ to continue it. Up and Down recall earlier prompts. /usage shows the session's tokens, /exit (or Ctrl-D) leaves. Ctrl-C cancels a running turn.")
			continue
		case "/usage":
			u := a.sess.Usage()
			a.view.notice(noticeInfo, fmt.Sprintf("session tokens: %s in (%s cached), %s out", count(u.InputTokens), count(u.CacheHitTokens), count(u.OutputTokens)))
			continue
		}
		var quit bool
		code, quit = a.turn(ctx, prompt, !interactive)
		if quit {
			return code
		}
		if code == exitFailed && fatal(a.lastCode) {
			return code
		}
	}
}

// readPrompt reads one prompt, joining lines that end with a backslash.
// ok is false at end of input; exit is true on Ctrl-C at the prompt or
// when the program is stopped.
func (a *app) readPrompt(ctx context.Context, lines <-chan string, interactive bool) (prompt string, ok, exit bool) {
	var parts []string
	for {
		marker := "\n› "
		if len(parts) > 0 {
			marker = "… "
		}
		var l string
		if a.term != nil {
			var more bool
			l, more, exit = a.editLine(ctx, strings.TrimPrefix(marker, "\n"), len(parts) == 0)
			if exit {
				return "", false, true
			}
			if !more {
				return strings.Join(parts, "\n"), len(parts) > 0, false
			}
		} else {
			if interactive {
				a.view.notice(noticePrompt, marker)
			}
			select {
			case got, more := <-lines:
				if !more {
					if interactive {
						a.view.notice(noticeInfo, "") // Ctrl-D left the cursor after the prompt
					}
					return strings.Join(parts, "\n"), len(parts) > 0, false
				}
				l = strings.TrimRight(got, "\r\n")
			case <-a.interrupts:
				a.view.notice(noticeInfo, "")
				return "", false, true
			case <-ctx.Done():
				return "", false, true
			}
		}
		if cont, found := strings.CutSuffix(l, `\`); found {
			parts = append(parts, cont)
			continue
		}
		prompt = strings.Join(append(parts, l), "\n")
		if a.term != nil {
			if err := a.term.hist.add(prompt); err != nil && a.o.verbose {
				fmt.Fprintf(a.stderr, "coder: saving the prompt history: %v\n", err)
			}
		}
		return prompt, true, false
	}
}

// terminal is the prompt loop's terminal: keys read as they are typed,
// those typed during a turn, and the workspace's prompt history.
type terminal struct {
	out       io.Writer
	keys      chan []byte
	typeahead []byte
	eof       bool
	hist      *history
	restore   func()
	// asks carries the approver's questions to the goroutine that owns
	// the keys while a turn runs, so that one reader edits every line.
	asks chan askLine
}

// askLine is a line the program asks the user for during a turn: the
// prompt shown before it and where the typed line goes ("" when the
// user gave no answer).
type askLine struct {
	prompt string
	reply  chan string
}

// openTerminal puts stdin in key mode and starts reading keys.
func (a *app) openTerminal() error {
	in := a.stdin.(*os.File)
	restore, err := keyMode(int(in.Fd()))
	if err != nil {
		return err
	}
	hist, err := loadHistory(historyPath(a.sessionsDir, a.root))
	if err != nil && a.o.verbose {
		fmt.Fprintf(a.stderr, "coder: reading the prompt history: %v\n", err)
	}
	t := &terminal{out: a.stdout, keys: make(chan []byte, 64), hist: hist, restore: restore, asks: make(chan askLine)}
	go func() {
		defer close(t.keys)
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				t.keys <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	a.term = t
	return nil
}

func (t *terminal) close() { t.restore() }

// editLine edits one line at the prompt. more is false at end of input
// (Ctrl-D on an empty line); exit is true on Ctrl-C or when the program
// is stopped. Keys typed during the last turn come back as the line's
// text, never sent without an Enter at the prompt.
func (a *app) editLine(ctx context.Context, marker string, first bool) (line string, more, exit bool) {
	if first {
		a.view.notice(noticePrompt, "\n")
	} else {
		a.view.notice(noticePrompt, "")
	}
	st := style(colorEnabled(true, a.env))
	ed := newLineEditor(st.paint(sgrBold+";"+sgrBlue, marker), utf8.RuneCountInString(marker), a.term.hist, "")
	if len(a.term.typeahead) > 0 {
		ahead := a.term.typeahead
		a.term.typeahead = nil
		for len(ahead) > 0 {
			res, rest := ed.feed(ahead)
			if res == keySubmit {
				ed.buf = append(ed.buf, ' ')
				ed.pos = len(ed.buf)
			}
			ahead = rest
		}
		ed.buf = []rune(strings.TrimRight(ed.text(), " "))
		ed.pos = len(ed.buf)
		if ed.text() != "" {
			a.view.notice(noticeInfo, "(typed during the turn, not sent: Enter sends it, Ctrl-U clears it)")
			a.view.notice(noticePrompt, "")
		}
	}
	if a.term.eof {
		io.WriteString(a.term.out, "\r\n")
		return "", false, false
	}
	io.WriteString(a.term.out, ed.render(a.width()))
	for {
		select {
		case b, ok := <-a.term.keys:
			if !ok {
				io.WriteString(a.term.out, "\r\n")
				return "", false, false
			}
			res, rest := ed.feed(b)
			switch res {
			case keyRedraw:
				io.WriteString(a.term.out, ed.render(a.width()))
			case keySubmit:
				ed.pos = len(ed.buf)
				io.WriteString(a.term.out, ed.render(a.width())+"\r\n")
				a.term.typeahead = rest
				return ed.text(), true, false
			case keyEOF:
				io.WriteString(a.term.out, "\r\n")
				return "", false, false
			case keyInterrupt:
				io.WriteString(a.term.out, "\r\n")
				return "", false, true
			}
		case <-a.resize:
			w := a.width()
			a.view.setWidth(w)
			io.WriteString(a.term.out, ed.render(w))
		case <-a.interrupts:
			io.WriteString(a.term.out, "\r\n")
			return "", false, true
		case <-ctx.Done():
			io.WriteString(a.term.out, "\r\n")
			return "", false, true
		}
	}
}

// answerLine edits the answer to a question asked during a turn, with
// prompt before it. Keys typed before the question stay typed ahead for
// the next prompt; interrupted is true on Ctrl-C, and the answer is then
// empty (no).
func (a *app) answerLine(ctx context.Context, prompt string) (line string, interrupted bool) {
	a.view.hold(true)
	defer a.view.hold(false)
	ed := newLineEditor(prompt, utf8.RuneCountInString(prompt), nil, "")
	io.WriteString(a.term.out, ed.render(a.width()))
	for {
		select {
		case b, ok := <-a.term.keys:
			if !ok {
				a.term.eof = true
				io.WriteString(a.term.out, "\r\n")
				return "", false
			}
			res, rest := ed.feed(b)
			switch res {
			case keyRedraw:
				io.WriteString(a.term.out, ed.render(a.width()))
			case keySubmit:
				ed.pos = len(ed.buf)
				io.WriteString(a.term.out, ed.render(a.width())+"\r\n")
				a.term.typeahead = append(a.term.typeahead, rest...)
				return ed.text(), false
			case keyEOF:
				io.WriteString(a.term.out, "\r\n")
				return "", false
			case keyInterrupt:
				io.WriteString(a.term.out, "\r\n")
				return "", true
			}
		case <-a.resize:
			w := a.width()
			a.view.setWidth(w)
			io.WriteString(a.term.out, ed.render(w))
		case <-a.interrupts:
			io.WriteString(a.term.out, "\r\n")
			return "", true
		case <-ctx.Done():
			io.WriteString(a.term.out, "\r\n")
			return "", true
		}
	}
}

// width is the terminal's width in columns: asked of the terminal when
// stdout is one, else $COLUMNS, else 100.
func (a *app) width() int {
	if f, ok := a.stdout.(*os.File); ok && isTerminal(f) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return max(w, 20)
		}
	}
	return columns(a.env)
}

// readLines sends stdin's lines until end of input or stop. A read that
// blocks when the program exits is left behind; the process ends anyway.
func readLines(r io.Reader, out chan<- string, stop <-chan struct{}) {
	defer close(out)
	br := bufio.NewReader(r)
	for {
		l, err := br.ReadString('\n')
		if l != "" {
			select {
			case out <- l:
			case <-stop:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// defaultSessionsDir is where session logs go unless -sessions says
// otherwise: $XDG_DATA_HOME/harness/sessions when XDG_DATA_HOME is set;
// else ~/Library/Application Support/harness/sessions on macOS,
// %LocalAppData%\harness\sessions on Windows, and
// ~/.local/share/harness/sessions elsewhere.
func defaultSessionsDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "harness", "sessions"), nil
	}
	if runtime.GOOS == "windows" {
		if d := getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "harness", "sessions"), nil
		}
	}
	home := getenv("HOME")
	if home == "" && runtime.GOOS == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return "", errors.New("no home directory ($HOME is not set)")
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "harness", "sessions"), nil
	}
	return filepath.Join(home, ".local", "share", "harness", "sessions"), nil
}

// columns is the terminal width from $COLUMNS, or 100.
func columns(getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return 100
}
