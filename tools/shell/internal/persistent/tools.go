package persistent

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// sessionsKey is the State key of one sessions tool set's shell table.
type sessionsKey struct{}

type openArgs struct {
	Cwd string `json:"cwd,omitzero" jsonschema:"Directory to start in. Default: the working directory."`
}

type sendArgs struct {
	SessionID string `json:"session_id" jsonschema:"Id from shell_open, such as sh1."`
	Command   string `json:"command" jsonschema:"Bash command; may span lines."`
	WaitMS    *int   `json:"wait_ms,omitempty" jsonschema:"Milliseconds to wait for it to finish."`
}

type readArgs struct {
	SessionID string `json:"session_id" jsonschema:"Id from shell_open, such as sh1."`
	WaitMS    *int   `json:"wait_ms,omitempty" jsonschema:"Milliseconds to wait."`
}

type closeArgs struct {
	SessionID string `json:"session_id" jsonschema:"Shell id."`
}

// Tools returns the persistent shell tools: shell_open(cwd?),
// shell_send(session_id, command, wait_ms?), shell_read(session_id,
// wait_ms?) and shell_close(session_id).
//
// Each shell is one long-lived bash (no profile or rc files) talking over
// pipes, without a terminal, so cd, variables, functions and background
// processes persist between commands while full-screen programs are not
// supported. A command is sent quoted on one line and run by eval with
// stdin from /dev/null, so neither a multi-line command nor one that
// reads stdin can confuse the protocol. The shell reports the end of
// each command, with its exit status and the shell's directory, on a
// status channel apart from the output, in a record with a fresh random
// nonce that bash prints itself: no function, alias or
// builtin a command redefines sees the nonce or can forge a record. A
// result says so when a command broke the protocol (closed the status
// channel, disabled eval), redirected the shell's stdout away or turned
// on set -e.
//
// Shells belong to the agent session that opened them (they live in its
// tools.State), are limited in number, close after an idle timeout, and
// are all stopped, with every process they started, when the session or
// the loop closes. Each shell runs in a cgroup or PID namespace of its own where
// the system allows it (see the package documentation). The environment and the sandbox are fixed when a shell opens
// and recorded in the session log as a "shell_open" record.
func Tools(cfg *shellkit.Config) []tools.Tool {
	s := &sessionTools{cfg: cfg, key: &sessionsKey{}}
	return cfg.Checked(s.openTool(), s.sendTool(), s.readTool(), s.closeTool())
}

type sessionTools struct {
	cfg *shellkit.Config
	key *sessionsKey
}

func (s *sessionTools) table(call *tools.Call) (*shells, error) {
	st := shellkit.CallEnv(call).State
	if st == nil {
		return nil, &harness.Error{Code: harness.CodeToolFailed, Message: "Persistent shells need session state, which this call does not have."}
	}
	m, err := tools.LoadState(st, s.key, func() *shells { return newShells(s.cfg) })
	if err != nil {
		return nil, &harness.Error{Code: harness.CodeAborted, Err: err, Message: "The session is closing; its shells are closed."}
	}
	return m, nil
}

func (s *sessionTools) common() string {
	return "Non-interactive like bash: stdin closed, pagers and editors off, no full-screen programs. "
}

func (s *sessionTools) openTool() tools.Tool {
	c := s.cfg
	desc := "Open a persistent bash shell; returns its id (sh1, sh2, ...). It keeps the directory, variables, functions and background processes between commands " +
		"(a cd, a virtualenv, a server). It starts in cwd. " +
		"Its commands run with the sandbox and environment bash states, fixed when it opens. " +
		"Closing it stops all its processes; where the system allows, it has its own cgroup or PID namespace. " +
		s.common() +
		fmt.Sprintf("At most %d open at once; one closes after %s unused, all when the session ends. ", c.MaxShells, shellkit.Dur(c.Idle)) +
		"Every result ends with the shell's directory."
	spec := tools.Spec{Name: "shell_open", Description: desc, SideEffects: true, Family: tools.FamilyProcess, NeedsOSDir: true,
		Deadline: startupWait + c.Grace + shellkit.DrainDelay + 30*time.Second, Render: harness.RenderTerminal}
	return tools.Define(spec, s.open)
}

func (s *sessionTools) sendTool() tools.Tool {
	c := s.cfg
	desc := "Run a command in a shell from shell_open. It runs in the shell itself, so cd, export, variables and functions last. " +
		fmt.Sprintf("Waits up to wait_ms (default %d, at most %d); if still running, returns the output so far: continue with shell_read. ", c.SendWait.Milliseconds(), c.MaxWait.Milliseconds()) +
		"One command at a time: sending while one runs is refused. " +
		"Output is stdout and stderr together, long output cut and saved as by bash. Every result ends with the exit code and directory. " +
		"Avoid exit and set -e, which end the shell; if it ends, the result says so and the next shell_send starts a fresh one."
	spec := tools.Spec{Name: "shell_send", Description: desc, SideEffects: true, Family: tools.FamilyProcess,
		Deadline: c.MaxWait + startupWait + c.Grace + 30*time.Second, Render: harness.RenderTerminal}
	return tools.Define(spec, s.send)
}

func (s *sessionTools) readTool() tools.Tool {
	c := s.cfg
	desc := "Read what a shell printed since the last call: the rest of a running command, or background output. " +
		fmt.Sprintf("Waits up to wait_ms (default %d, at most %d) for a running command; with none running, returns at once, or after wait_ms if given. ", c.ReadWait.Milliseconds(), c.MaxWait.Milliseconds()) +
		"Long output is cut and saved as by bash. Every result ends with the command's status and the directory."
	spec := tools.Spec{Name: "shell_read", Description: desc, Family: tools.FamilyProcess,
		Deadline: c.MaxWait + c.Grace + 30*time.Second, Render: harness.RenderTerminal}
	return tools.Define(spec, s.read)
}

func (s *sessionTools) closeTool() tools.Tool {
	c := s.cfg
	desc := fmt.Sprintf("Close a shell: stop all its processes, also in new sessions (SIGTERM, SIGKILL %s later), and return its last output.", shellkit.Dur(c.Grace))
	spec := tools.Spec{Name: "shell_close", Description: desc, SideEffects: true, Family: tools.FamilyProcess,
		Deadline: c.Grace + shellkit.DrainDelay + 30*time.Second, Render: harness.RenderTerminal}
	return tools.Define(spec, s.close)
}

// openRecord is what the session log keeps of a shell when it opens.
type openRecord struct {
	SessionID string   `json:"session_id"`
	Argv      []string `json:"argv"`
	Dir       string   `json:"dir"`
	OSDir     string   `json:"os_dir,omitempty"`
	// Env lists the variables the tools set; Inherit says where the rest
	// came from: "process" (the program's environment) or "configured".
	Env     []string `json:"env"`
	Inherit string   `json:"inherit"`
	// Environment says what the shell got of the host's environment (the
	// names withheld, never values).
	Environment string `json:"environment,omitempty"`
	Sandbox     string `json:"sandbox,omitempty"`
	// PID is the shell's process id as the host sees it.
	PID int `json:"pid"`
	// Containment says how the shell's processes are held together:
	// "pid namespace", or "process tree (no pid namespace: ...)".
	Containment   string `json:"containment"`
	IdleTimeoutMS int64  `json:"idle_timeout_ms"`
	// Restart is set on the record of a shell started again after the
	// first one ended.
	Restart bool `json:"restart,omitempty"`
}

func (s *sessionTools) record(ctx context.Context, call *tools.Call, sh *shell, pid int, how string, restart bool) {
	inherit := "process"
	if s.cfg.BaseEnv != nil {
		inherit = "configured"
	}
	rec := openRecord{SessionID: sh.id, Argv: sh.argv, Dir: sh.ns, Env: s.cfg.Settings(), Inherit: inherit, Environment: s.cfg.EnvText(),
		PID: pid, Containment: how, IdleTimeoutMS: s.cfg.Idle.Milliseconds(), Restart: restart}
	if sh.dir != sh.ns {
		rec.OSDir = sh.dir
	}
	if s.cfg.Sandbox != nil {
		rec.Sandbox = s.cfg.Sandbox.Describe()
	}
	env := shellkit.CallEnv(call)
	if env == nil || env.Record == nil {
		return
	}
	if err := env.Record(ctx, call, "shell_open", rec); err != nil {
		toolexec.Logger(env).Warn("recording a shell's settings failed", "shell", sh.id, "error", err)
	}
}

// shell returns the shell table of a call's session and the shell id
// names in it.
func (s *sessionTools) shell(call *tools.Call, id string) (*shells, *shell, error) {
	m, err := s.table(call)
	if err != nil {
		return nil, nil, err
	}
	sh, err := m.get(id)
	if err != nil {
		return nil, nil, err
	}
	return m, sh, nil
}

// lockOpen returns the shell id names, locked, when it is still open;
// the caller unlocks it.
func (s *sessionTools) lockOpen(call *tools.Call, id string) (*shell, error) {
	_, sh, err := s.shell(call, id)
	if err != nil {
		return nil, err
	}
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return nil, &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("Shell %s is closed. Open a new one with shell_open.", sh.id)}
	}
	return sh, nil
}

func (s *sessionTools) open(ctx context.Context, call *tools.Call, in openArgs) (*harness.ToolResult, error) {
	env := shellkit.CallEnv(call)
	// bash reads its script (the command lines) from descriptor 3.
	ns, dir, argv, err := s.cfg.Command(env, in.Cwd, scriptPath)
	if err != nil {
		return nil, err
	}
	m, err := s.table(call)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, &harness.Error{Code: harness.CodeAborted, Message: "The session is closing; no shell was opened."}
	}
	if len(m.open) >= s.cfg.MaxShells {
		open := strings.Join(m.order, ", ")
		m.mu.Unlock()
		return nil, &harness.Error{Code: shellkit.CodeTooManyShells, Message: fmt.Sprintf(
			"%d shells are open already (%s), the most allowed. Reuse one with shell_send, or close one with shell_close first.", s.cfg.MaxShells, open)}
	}
	m.next++
	sh := &shell{
		id: fmt.Sprintf("sh%d", m.next), m: m,
		argv: argv, env: s.cfg.Environ(), dir: dir, ns: ns, store: env.Output, session: env.SessionID,
		changed: make(chan struct{}), done: make(chan struct{}), lastUse: time.Now(),
	}
	sh.window = shellkit.NewCapture(m.ctx, s.cfg.OutputLimit, sh.store, shellkit.Owner(call), s.cfg.MaxSpill)
	m.open[sh.id] = sh
	m.order = append(m.order, sh.id)
	m.mu.Unlock()

	sh.mu.Lock()
	out, err := sh.startLocked()
	var pid int
	var how string
	if sh.p != nil {
		pid, how = sh.p.Main(), sh.p.How()
	}
	sh.mu.Unlock()
	if err != nil {
		m.closeShell(sh, "it failed to start")
		msg := fmt.Sprintf("The shell could not be opened: %v.", err)
		if out != "" {
			msg += "\nIts output:\n" + out
		}
		return nil, &harness.Error{Code: shellkit.CodeNoShell, Err: err, Message: msg}
	}
	sh.mu.Lock()
	sh.idle = time.AfterFunc(s.cfg.Idle, func() { m.reapIdle(sh) })
	sh.mu.Unlock()
	s.record(ctx, call, sh, pid, how, false)

	var b strings.Builder
	fmt.Fprintf(&b, "Opened shell %s in %s. Run commands in it with shell_send (session_id %q); "+
		"its directory, variables, functions and background processes persist between commands until shell_close. "+
		"Its environment and sandbox settings are now fixed for its lifetime.\n", sh.id, ns, sh.id)
	b.WriteString(out)
	shellkit.EnsureNewline(&b)
	fmt.Fprintf(&b, "[containment: %s]\n[cwd %s]", how, ns)
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(b.String())},
		Render: &harness.Render{Kind: harness.RenderTerminal, Title: "shell " + sh.id,
			Terminal: &harness.Terminal{Cwd: ns, Output: out, Status: shellkit.StatusRunning}},
	}, nil
}

func (s *sessionTools) send(ctx context.Context, call *tools.Call, in sendArgs) (*harness.ToolResult, error) {
	if err := shellkit.CheckCommand(in.Command); err != nil {
		return nil, err
	}
	wait, err := shellkit.WaitArg(in.WaitMS, s.cfg.SendWait, s.cfg.MaxWait)
	if err != nil {
		return nil, err
	}
	sh, err := s.lockOpen(call, in.SessionID)
	if err != nil {
		return nil, err
	}
	defer sh.mu.Unlock()
	if sh.scan != nil {
		return nil, &harness.Error{Code: harness.CodeBusy, Message: fmt.Sprintf(
			"Shell %s is still running %s (for %s), so the command was not sent. "+
				"Call shell_read (session_id %q) to wait for it and see its output, shell_close to stop it (the shell's state is lost), "+
				"or run independent commands with bash or in another shell.",
			sh.id, quoteCommand(sh.command), shellkit.Dur(time.Since(sh.cmdStart)), sh.id)}
	}
	if sh.broken != "" && sh.death == "" {
		return nil, &harness.Error{Code: shellkit.CodeShellBroken, Message: fmt.Sprintf(
			"Shell %s is broken, so the command was not sent: %s. Close it with shell_close and open a new one with shell_open; "+
				"its variables, functions and background processes are lost. Call shell_read (session_id %q) to see what it printed.",
			sh.id, sh.broken, sh.id)}
	}
	sh.touchLocked(call)
	var pre strings.Builder
	if earlier := sh.takeLocked(s.cfg.OutputLimit / 4); earlier != "" {
		pre.WriteString("[output printed since the last call, before this command:]\n")
		pre.WriteString(earlier)
		shellkit.EnsureNewline(&pre)
	}
	if sh.death != "" {
		death := sh.death
		if _, err := sh.startLocked(); err != nil {
			return nil, &harness.Error{Code: shellkit.CodeNoShell, Err: err, Message: fmt.Sprintf("%s, and a fresh shell could not be started: %v. Close it with shell_close.", death, err)}
		}
		fmt.Fprintf(&pre, "[%s. This command runs in a fresh shell started in %s: variables, functions and background processes from before are gone.]\n", death, sh.ns)
		pid, how := 0, ""
		if sh.p != nil {
			pid, how = sh.p.Main(), sh.p.How()
		}
		s.record(ctx, call, sh, pid, how, true)
		sh.touchLocked(call)
	}
	if pre.Len() > 0 {
		pre.WriteString("[output of this command:]\n")
	}
	line := sh.beginLocked(in.Command, true)
	script := sh.script
	// Reported from before the write: output that arrives while the lock
	// is released for it is the command's too.
	sh.live = shellkit.LiveReport(call)
	// The shell reads one line at a time and is idle, so the write
	// completes as the shell parses it.
	sh.mu.Unlock()
	_, werr := io.WriteString(script, line)
	sh.mu.Lock()
	if werr != nil && sh.death == "" && sh.scan != nil {
		// The shell is going away; the watcher will say how.
		sh.waitLocked(context.Background(), shellkit.DrainDelay+s.cfg.Grace)
	}
	sh.waitLocked(ctx, wait)
	sh.live = nil
	return s.resultLocked(ctx, sh, in.Command, pre.String()), nil
}

func (s *sessionTools) read(ctx context.Context, call *tools.Call, in readArgs) (*harness.ToolResult, error) {
	wait, err := shellkit.WaitArg(in.WaitMS, s.cfg.ReadWait, s.cfg.MaxWait)
	if err != nil {
		return nil, err
	}
	sh, err := s.lockOpen(call, in.SessionID)
	if err != nil {
		return nil, err
	}
	defer sh.mu.Unlock()
	sh.touchLocked(call)
	switch {
	case sh.scan != nil:
		sh.live = shellkit.LiveReport(call)
		sh.waitLocked(ctx, wait)
		sh.live = nil
	case in.WaitMS != nil && sh.death == "":
		sh.sleepLocked(ctx, wait)
	}
	return s.resultLocked(ctx, sh, sh.command, ""), nil
}

func (s *sessionTools) close(ctx context.Context, call *tools.Call, in closeArgs) (*harness.ToolResult, error) {
	m, sh, err := s.shell(call, in.SessionID)
	if err != nil {
		return nil, err
	}
	sh.mu.Lock()
	running, command := sh.scan != nil, sh.command
	how, partial := "", false
	if sh.p != nil {
		how, partial = sh.p.How(), sh.p.Partial()
	}
	sh.mu.Unlock()
	stopped := m.closeShell(sh, "closed with shell_close")
	sh.mu.Lock()
	defer sh.mu.Unlock()
	out := sh.takeLocked(s.cfg.OutputLimit)
	sh.window.Finish(false)
	var b strings.Builder
	b.WriteString(out)
	shellkit.EnsureNewline(&b)
	if running {
		fmt.Fprintf(&b, "[closed shell %s; %s was still running; its processes %s]\n", sh.id, quoteCommand(command), stopped.Ended(partial))
	} else {
		fmt.Fprintf(&b, "[closed shell %s; its processes %s]\n", sh.id, stopped.Ended(partial))
	}
	if how != "" {
		fmt.Fprintf(&b, "[containment: %s]\n", how)
	}
	fmt.Fprintf(&b, "[cwd %s]", sh.cwd)
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(b.String())},
		Render: &harness.Render{Kind: harness.RenderTerminal, Title: "close shell " + sh.id,
			Terminal: &harness.Terminal{Cwd: sh.cwd, Output: out, Status: shellkit.StatusKilled}},
	}, nil
}

// resultLocked renders what the shell printed since the last look and
// its status. When ctx has ended, the running command is interrupted
// first (SIGINT) and the result is an error result saying so.
func (s *sessionTools) resultLocked(ctx context.Context, sh *shell, command, pre string) *harness.ToolResult {
	cancelled := ctx.Err() != nil
	interrupted := false
	if cancelled && sh.scan != nil {
		sh.interruptLocked()
		interrupted = true
	}
	out := sh.takeLocked(s.cfg.OutputLimit - len(pre))
	var b strings.Builder
	b.WriteString(pre)
	b.WriteString(out)
	if out == "" && pre == "" {
		b.WriteString("(no output)\n")
	}
	if cancelled {
		shellkit.EnsureNewline(&b)
		switch {
		case interrupted && sh.scan == nil:
			b.WriteString("[the call was cancelled: the command was interrupted with SIGINT]\n")
		case interrupted:
			b.WriteString("[the call was cancelled: the command was sent SIGINT but is still running; shell_close stops it]\n")
		default:
			b.WriteString("[the call was cancelled]\n")
		}
	}
	status, code := sh.statusLocked(&b)
	res := &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(b.String())},
		Render: &harness.Render{Kind: harness.RenderTerminal, Title: shellkit.Title("", command),
			Terminal: &harness.Terminal{Command: command, Cwd: sh.cwd, Output: out, ExitCode: code, Status: status}},
	}
	if cancelled {
		res.IsError = true
		res.Code = harness.CodeOf(ctx.Err())
		res.Render.Terminal.Status = shellkit.StatusCancelled
	}
	return res
}
