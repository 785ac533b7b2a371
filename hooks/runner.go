package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/logs"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// Config configures a Runner. The zero value runs the hooks given to
// New with the defaults below.
type Config struct {
	// ProjectDir is the project's directory, an OS path: hooks get it as
	// CLAUDE_PROJECT_DIR (and HARNESS_PROJECT_DIR), and run in it when
	// the session's working directory has no OS path. Load reads
	// .harness/settings.json (and, with Claude, .claude/settings.json
	// and .claude/settings.local.json) from it.
	ProjectDir string
	// Claude turns on the compatibility with Claude Code's settings:
	// Load also reads .claude/settings.json and
	// .claude/settings.local.json of the project, and, with Home,
	// Home/.claude/settings.json.
	Claude bool
	// Home is the user's home directory, an OS path; empty means no
	// user-level settings (it is never looked up on its own).
	Home string
	// Sandbox, when set, confines every hook command as it confines the
	// agent's commands (pass the shell tools' sandbox). Without one,
	// hooks run unconfined, with the environment below.
	Sandbox Sandbox
	// PassEnv names variables of the host's environment hooks get
	// besides the allow-list (PATH, LANG, LANGUAGE, LC_*, TZ, USER,
	// LOGNAME, SHELL, TMPDIR, and HOME without a sandbox); a name ending
	// in * is a prefix. Nothing else of the host's environment reaches a
	// hook: no credential does unless named here.
	PassEnv []string
	// Env are more variables for hooks, as NAME=value.
	Env []string
	// DefaultTimeout is how long a hook without a timeout of its own
	// runs: DefaultTimeout (60 s) when zero. MaxTimeout caps every
	// hook's: 10 minutes when zero.
	DefaultTimeout, MaxTimeout time.Duration
	// MaxOutput caps what is kept of a hook's standard output and of its
	// standard error, each: 64 KiB when zero. A hook that writes more
	// than 16 times as much is stopped.
	MaxOutput int
	// TranscriptPath, when set, gives the transcript_path hooks are
	// told for a session id (the session log's file).
	TranscriptPath func(sessionID string) string
	// PermissionMode is the permission_mode hooks are told; "default"
	// when empty.
	PermissionMode string
	// Logger receives warnings (settings skipped, hooks that failed);
	// nil discards them.
	Logger *slog.Logger
}

// Runner runs the command hooks of settings files on the agent loop's
// seams: tool middleware for the tool events, lifecycle calls for the
// session and turn events, a turn observer and an approver wrapper for
// notifications and permission requests. Options returns all of them.
// It is safe for concurrent use.
type Runner struct {
	cfg      Config
	settings Settings
	logger   *slog.Logger

	contOnce sync.Once
	cont     *proctree.Containment

	// agents remembers the agent type of each task call, for
	// SubagentStart and SubagentStop.
	agentsMu sync.Mutex
	agents   map[string]string
}

// Load reads the settings files cfg names, in this order, and returns a
// Runner for their hooks: ProjectDir/.harness/settings.json, and with
// Claude also ProjectDir/.claude/settings.json,
// ProjectDir/.claude/settings.local.json and Home/.claude/settings.json.
// The hooks of all files run, those of earlier files first. A file that
// does not exist is skipped; one that is malformed is an error matching
// harness.CodeInvalidOption that names it.
func Load(cfg Config) (*Runner, error) {
	var paths []string
	if cfg.ProjectDir != "" {
		paths = append(paths, filepath.Join(cfg.ProjectDir, ".harness", "settings.json"))
		if cfg.Claude {
			paths = append(paths, filepath.Join(cfg.ProjectDir, ".claude", "settings.json"), filepath.Join(cfg.ProjectDir, ".claude", "settings.local.json"))
		}
	}
	if cfg.Claude && cfg.Home != "" {
		paths = append(paths, filepath.Join(cfg.Home, ".claude", "settings.json"))
	}
	s, err := ReadSettings(paths...)
	if err != nil {
		return nil, err
	}
	return New(cfg, s), nil
}

// New returns a Runner for the hooks of s.
func New(cfg Config, s Settings) *Runner {
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = DefaultTimeout
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 10 * time.Minute
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = 64 << 10
	}
	if cfg.PermissionMode == "" {
		cfg.PermissionMode = "default"
	}
	r := &Runner{cfg: cfg, settings: s, logger: logs.OrDiscard(cfg.Logger), agents: map[string]string{}}
	for _, w := range s.Warnings {
		r.logger.Warn("hooks: " + w)
	}
	if s.Disabled {
		r.logger.Info("hooks: a settings file disables all hooks")
	}
	return r
}

// Settings returns the hooks the runner runs.
func (r *Runner) Settings() Settings { return r.settings }

// Count returns how many command hooks are configured, all events
// together (0 when a file disables them).
func (r *Runner) Count() int {
	if r.settings.Disabled {
		return 0
	}
	n := 0
	for _, gs := range r.settings.Hooks {
		for _, g := range gs {
			n += len(g.Hooks)
		}
	}
	return n
}

// Options returns the loop options that install the runner: its tool
// middleware (agent.WithHooks; put spill and deadlines after it, so a
// blocked call is not run at all), its lifecycle calls and its turn
// observer. A host with a synchronous approver wraps it with Approver
// itself.
func (r *Runner) Options() []agent.Option {
	return []agent.Option{
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{r.Middleware()}, Turns: []agent.TurnObserver{r.Observer()}}),
		agent.WithLifecycle(r.Lifecycle()),
	}
}

// matching returns the commands of ev whose matcher matches one of
// names, without repeats (the same command line in two groups runs
// once), with the matcher each was found under.
func (r *Runner) matching(ev Event, names ...string) (cmds []Command, matchers []string) {
	if r.settings.Disabled {
		return nil, nil
	}
	seen := map[string]bool{}
	for i := range r.settings.Hooks[ev] {
		g := &r.settings.Hooks[ev][i]
		if !g.match(names...) {
			continue
		}
		for _, c := range g.Hooks {
			if seen[c.Command] {
				continue
			}
			seen[c.Command] = true
			cmds = append(cmds, c)
			matchers = append(matchers, g.Matcher)
		}
	}
	return cmds, matchers
}

// fired is one hook's run, read.
type fired struct {
	run     run
	matcher string
	out     *output
	// decided is what the run decided, for the log.
	decided string
	reason  string
	warn    string
}

// fire runs the hooks of ev matching names, all at once, with in (the
// event's JSON) on their standard input, and returns their runs in
// settings order.
func (r *Runner) fire(ctx context.Context, ev Event, names []string, dir, project string, in map[string]any) []*fired {
	cmds, matchers := r.matching(ev, names...)
	if len(cmds) == 0 {
		return nil
	}
	data, err := json.Marshal(in)
	if err != nil {
		data = []byte("{}")
	}
	out := make([]*fired, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() {
			f := &fired{run: r.exec(ctx, c, dir, project, data), matcher: matchers[i]}
			if f.run.exit != nil && *f.run.exit == 0 {
				o, looks, perr := parseOutput(f.run.stdout)
				f.out = o
				if perr != nil && looks {
					f.warn = perr.Error()
				}
			}
			out[i] = f
		})
	}
	wg.Wait()
	return out
}

// record logs a run to the session and, when it failed, warns.
func (r *Runner) record(ctx context.Context, ev Event, f *fired, tool, callID string) {
	hr := &session.HookRun{Event: string(ev), Matcher: f.matcher, Command: f.run.cmd.Command, Source: f.run.cmd.Source, Tool: tool, CallID: callID,
		ExitCode: f.run.exit, Signal: f.run.signal, TimedOut: f.run.timedOut, Decision: f.decided, Reason: cut(f.reason, 2000), DurationMS: f.run.dur.Milliseconds()}
	var errs []string
	if why := f.run.failed(); why != "" {
		errs = append(errs, why)
	}
	if f.warn != "" {
		errs = append(errs, f.warn)
	}
	if f.run.stdoutDropped > 0 || f.run.stderrDropped > 0 {
		errs = append(errs, fmt.Sprintf("its output was cut: %d bytes of standard output and %d of standard error were not kept", f.run.stdoutDropped, f.run.stderrDropped))
	}
	hr.Error = strings.Join(errs, "; ")
	if hr.Error != "" {
		r.logger.Warn("a hook did not run cleanly", "event", ev, "command", f.run.cmd.Command, "error", hr.Error)
	}
	if err := agent.LogHookRun(ctx, hr); err != nil {
		r.logger.Debug("a hook's run could not be logged", "event", ev, "error", err)
	}
}

// updatedOf returns a run's updatedInput.
func (f *fired) updated() json.RawMessage {
	if f.out == nil || f.out.HookSpecificOutput == nil {
		return nil
	}
	u := f.out.HookSpecificOutput.UpdatedInput
	if len(u) == 0 || string(u) == "null" {
		return nil
	}
	return u
}

// blocked reads a run as Claude Code reads a blocking hook: exit status
// 2 (reason: standard error), or continue false (reason: stopReason),
// or decision "block" (reason: reason).
func (f *fired) blocked() (bool, string) {
	if f.run.exit != nil && *f.run.exit == 2 {
		return true, strings.TrimSpace(f.run.stderr)
	}
	if f.out == nil {
		return false, ""
	}
	if f.out.Continue != nil && !*f.out.Continue {
		return true, f.out.StopReason
	}
	if f.out.Decision == "block" {
		return true, f.out.Reason
	}
	return false, ""
}

// nonBlocking returns the text of a run that failed without blocking
// (an exit status other than 0 and 2, a timeout, a kill), or "".
func (f *fired) nonBlocking() string {
	if why := f.run.failed(); why != "" {
		return why
	}
	if code := *f.run.exit; code != 0 && code != 2 {
		s := fmt.Sprintf("it exited with status %d", code)
		if e := strings.TrimSpace(f.run.stderr); e != "" {
			s += ": " + cut(e, 500)
		}
		return s
	}
	return ""
}

func (f *fired) context() string {
	if f.out != nil && f.out.HookSpecificOutput != nil {
		return f.out.HookSpecificOutput.AdditionalContext
	}
	return ""
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// dirs returns where a hook runs and the project directory, for a
// session working in cwd (a path of fsys, which may be nil).
func (r *Runner) dirs(fsys fs.FileSystem, cwd string) (dir, project string) {
	project = r.cfg.ProjectDir
	if fsys != nil {
		if lp, ok := fsys.(fs.LocalPather); ok {
			if d, err := lp.LocalPath(cwd); err == nil {
				dir = d
			}
		}
	}
	if dir == "" && cwd != "" {
		if fi, err := os.Stat(cwd); err == nil && fi.IsDir() && (project == "" || within(cwd, project)) {
			dir = cwd
		}
	}
	if dir == "" {
		dir = project
	}
	if project == "" {
		project = dir
	}
	if dir == "" {
		dir = os.TempDir()
	}
	return dir, project
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// common are the fields every event's input has.
func (r *Runner) common(ev Event, sessionID, cwd string) map[string]any {
	tp := ""
	if r.cfg.TranscriptPath != nil {
		tp = r.cfg.TranscriptPath(sessionID)
	}
	return map[string]any{"session_id": sessionID, "transcript_path": tp, "cwd": cwd, "permission_mode": r.cfg.PermissionMode, "hook_event_name": string(ev)}
}

// Middleware runs the tool events' hooks around every call, whatever
// tool it is (an MCP server's, a sub-agent's task, a sub-agent's own
// calls): PreToolUse before it runs, PostToolUse after it succeeded,
// PostToolUseFailure after it failed. Matchers see the tool by its
// Claude Code name (Bash, Read, Edit, Write, Glob, Grep, Task, ...) and
// by its own.
//
// A PreToolUse hook that exits with 2 (its standard error is the
// reason), says "continue": false, "decision": "block" or
// "permissionDecision": "deny", or prints an object that is not valid
// JSON, blocks the call: it does not run, and the model reads why.
// "ask" asks the loop's approver (without one the call is denied: a
// running call cannot pause the turn). "allow" changes nothing: the
// permission policy decided before the hooks ran, and a hook cannot
// widen it. An updatedInput replaces the call's arguments, which are
// then checked again, against the tool's schema and by the permission
// policy (agent.Recheck). Additional context, and what a PostToolUse
// hook that blocks says, are added to the result the model reads.
func (r *Runner) Middleware() tools.Middleware {
	return func(next tools.Handler) tools.Handler {
		return func(ctx context.Context, call *tools.Call) *harness.ToolResult {
			if r.settings.Disabled {
				return next(ctx, call)
			}
			var fsys fs.FileSystem
			sessionID, cwd := "", ""
			if call.Env != nil {
				fsys, sessionID, cwd = call.Env.FS, call.Env.SessionID, call.Env.Cwd
			}
			dir, project := r.dirs(fsys, cwd)
			claude := permission.ClaudeName(call.Name)
			in := toolInput(call)
			if call.Name == "task" {
				if a, ok := in["agent"].(string); ok {
					r.agentsMu.Lock()
					r.agents[call.ID] = a
					r.agentsMu.Unlock()
				}
			}
			blocked, run, extra := r.preToolUse(ctx, call, claude, in, sessionID, dir, project)
			if blocked != nil {
				return blocked
			}
			res := next(ctx, run)
			if res == nil {
				return res
			}
			extra = append(extra, r.postToolUse(ctx, run, claude, toolInput(run), res, sessionID, dir, project)...)
			if len(extra) == 0 {
				return res
			}
			out := *res
			out.Content = append(append([]harness.Block(nil), res.Content...), harness.TextBlock(strings.Join(extra, "\n")))
			return &out
		}
	}
}

// preToolUse runs PreToolUse. It returns the result to give instead of
// running the call, or the call to run (with its input updated) and
// context for the model.
func (r *Runner) preToolUse(ctx context.Context, call *tools.Call, claude string, in map[string]any, sessionID, dir, project string) (*harness.ToolResult, *tools.Call, []string) {
	input := r.common(PreToolUse, sessionID, dir)
	input["tool_name"], input["tool_input"], input["tool_use_id"] = claude, in, call.ID
	runs := r.fire(ctx, PreToolUse, []string{claude, call.Name}, dir, project, input)
	if len(runs) == 0 {
		return nil, call, nil
	}
	var deny, ask, context []string
	var updated json.RawMessage
	for _, f := range runs {
		if blocked, why := f.blocked(); blocked {
			f.decided, f.reason = "deny", why
			deny = append(deny, orDefault(why, "a PreToolUse hook blocked it"))
		} else if f.warn != "" {
			// Output that starts as JSON and is not: its decision
			// cannot be read, so the call does not run.
			f.decided, f.reason = "deny", "unreadable output: "+f.warn
			deny = append(deny, "a PreToolUse hook's output could not be read ("+f.warn+"), so its decision is unknown")
		} else if f.out != nil && f.out.HookSpecificOutput != nil {
			h := f.out.HookSpecificOutput
			switch h.PermissionDecision {
			case "deny":
				f.decided, f.reason = "deny", h.PermissionDecisionReason
				deny = append(deny, orDefault(h.PermissionDecisionReason, "a PreToolUse hook denied it"))
			case "ask":
				f.decided, f.reason = "ask", h.PermissionDecisionReason
				ask = append(ask, orDefault(h.PermissionDecisionReason, "a PreToolUse hook asks for approval"))
			case "allow":
				f.decided, f.reason = "allow", h.PermissionDecisionReason
			}
			if u := f.updated(); u != nil && updated == nil {
				updated = u
				f.decided = strings.TrimPrefix(f.decided+"+update", "+")
			}
			if h.AdditionalContext != "" {
				context = append(context, h.AdditionalContext)
			}
		} else if f.out != nil && f.out.Decision == "approve" {
			f.decided = "allow"
		}
		if w := f.nonBlocking(); w != "" && f.decided == "" {
			r.progress(call, PreToolUse, w)
		}
		if f.out != nil && f.out.SystemMessage != "" {
			r.progress(call, PreToolUse, f.out.SystemMessage)
		}
	}
	defer func() {
		for _, f := range runs {
			r.record(ctx, PreToolUse, f, call.Name, call.ID)
		}
	}()
	if len(deny) > 0 {
		return harness.ErrorResult(harness.CodeDenied, "A PreToolUse hook blocked this %s call; it was not run, and nothing was changed by it. The hook said: %s", call.Name, strings.Join(deny, "; ")), nil, nil
	}
	run := call
	if updated != nil {
		args, err := fromClaude(call.Name, updated)
		if err != nil {
			return harness.ErrorResult(harness.CodeDenied, "A PreToolUse hook changed this %s call's input to something that is not a JSON object; the call was not run.", call.Name), nil, nil
		}
		if !sameJSON(args, []byte(call.Arguments)) {
			c := *call
			c.Arguments = string(args) // Recheck decodes it again
			if res := agent.Recheck(ctx, &c); res != nil {
				return res, nil, nil
			}
			run = &c
			for _, f := range runs {
				if f.updated() != nil {
					f.reason = strings.TrimSpace(f.reason + " (input: " + cut(string(args), 500) + ")")
				}
			}
		}
	}
	if len(ask) > 0 {
		if res := agent.Confirm(ctx, run, "a PreToolUse hook asks: "+strings.Join(ask, "; ")); res != nil {
			return res, nil, nil
		}
	}
	var extra []string
	for _, c := range context {
		extra = append(extra, "[PreToolUse hook] "+c)
	}
	return nil, run, extra
}

// postToolUse runs PostToolUse or PostToolUseFailure and returns what
// they add to the result.
func (r *Runner) postToolUse(ctx context.Context, call *tools.Call, claude string, in map[string]any, res *harness.ToolResult, sessionID, dir, project string) []string {
	ev := PostToolUse
	input := r.common(ev, sessionID, dir)
	if res.IsError {
		ev = PostToolUseFailure
		input = r.common(ev, sessionID, dir)
		input["error"] = res.Text()
		input["is_interrupt"] = res.Code == harness.CodeAborted
	} else {
		resp := map[string]any{"output": res.Text(), "success": true}
		if p, ok := in["file_path"]; ok {
			resp["filePath"] = p
		}
		input["tool_response"] = resp
	}
	input["tool_name"], input["tool_input"], input["tool_use_id"] = claude, in, call.ID
	runs := r.fire(ctx, ev, []string{claude, call.Name}, dir, project, input)
	var extra []string
	for _, f := range runs {
		if blocked, why := f.blocked(); blocked {
			f.decided, f.reason = "block", why
			extra = append(extra, fmt.Sprintf("[%s hook] %s", ev, orDefault(why, "a hook objects to this result")))
		}
		if c := f.context(); c != "" {
			f.decided = strings.TrimPrefix(f.decided+"+context", "+")
			extra = append(extra, fmt.Sprintf("[%s hook] %s", ev, c))
		}
		if w := f.nonBlocking(); w != "" && f.decided == "" {
			r.progress(call, ev, w)
		}
		if f.out != nil && f.out.SystemMessage != "" {
			r.progress(call, ev, f.out.SystemMessage)
		}
		r.record(ctx, ev, f, call.Name, call.ID)
	}
	return extra
}

// progress shows a hook's non-blocking failure to the host, not the
// model, as Claude Code shows it to the user.
func (r *Runner) progress(call *tools.Call, ev Event, why string) {
	if call.OnProgress != nil {
		call.OnProgress(tools.Progress{Message: fmt.Sprintf("%s hook: %s", ev, why)})
	}
}

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
