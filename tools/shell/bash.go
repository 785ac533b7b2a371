package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// drainDelay is how long output is still read after a command's process
// group is gone. Only a process that left the group (setsid) and kept the
// output pipe open makes it matter.
const drainDelay = time.Second

type bashArgs struct {
	Command     string `json:"command" jsonschema:"The bash command line to run. It may span several lines."`
	TimeoutMS   int    `json:"timeout_ms,omitzero" jsonschema:"Milliseconds before the command is stopped. Optional; larger values are clamped to the maximum."`
	Workdir     string `json:"workdir,omitzero" jsonschema:"Directory to run in, absolute or relative to the session's working directory. Optional; defaults to the session's working directory."`
	Description string `json:"description,omitzero" jsonschema:"A few words saying what the command does, shown to the user. Optional."`
}

type bashJobArgs struct {
	Command         string `json:"command" jsonschema:"The bash command line to run. It may span several lines."`
	TimeoutMS       int    `json:"timeout_ms,omitzero" jsonschema:"Milliseconds before the command is stopped. Optional; larger values are clamped to the maximum. Ignored with run_in_background."`
	Workdir         string `json:"workdir,omitzero" jsonschema:"Directory to run in, absolute or relative to the session's working directory. Optional; defaults to the session's working directory."`
	Description     string `json:"description,omitzero" jsonschema:"A few words saying what the command does, shown to the user. Optional."`
	RunInBackground bool   `json:"run_in_background,omitzero" jsonschema:"Start the command as a background job and return its job id at once, for servers and watchers. Optional."`
}

// Bash returns the one-shot bash tool: bash(command, timeout_ms?,
// workdir?, description?). Each call runs the command in a fresh
// non-interactive bash (no profile or rc files) with stdin closed, in
// the session's working directory or workdir (confined to the file
// system's root when the file system is OS-backed), contained so that a
// stop reaches every process it starts: in a PID namespace of its own
// where the system allows it (see the package documentation). The
// command is stopped with SIGTERM to all its processes when its timeout
// passes or the call is cancelled, and with SIGKILL after the grace
// period. Stdout and stderr are kept apart; the model sees the head
// and tail of each, and a stream too long to show is saved whole to the
// session's output store as it arrives, so memory stays bounded whatever
// the command prints. A non-zero exit is a normal result that states the
// exit code.
//
// An invalid option value is reported by the tool's Validate method
// (harness.CodeInvalidOption), which tools.NewRegistry calls, so the
// agent loop refuses the tool; so it is for every constructor here.
func Bash(opts ...Option) tools.Tool {
	b := &bashTool{cfg: newConfig(opts)}
	return toolexec.Checked(tools.Define(b.spec(false), func(ctx context.Context, call *tools.Call, in bashArgs) (*harness.ToolResult, error) {
		return b.run(ctx, call, bashJobArgs{Command: in.Command, TimeoutMS: in.TimeoutMS, Workdir: in.Workdir, Description: in.Description})
	}), b.cfg.err)
}

// bashWithJobs returns the bash tool with a run_in_background argument,
// and the two tools that go with it: bash_output(job_id, wait_ms?), which
// returns what a job printed since the last look, and bash_kill(job_id),
// which stops a job. Background jobs have no timeout; an agent session
// keeps a bounded number of them, and all are stopped (every process
// they started) when the session closes. Register these instead of
// Bash, not beside it: both tools are named bash.
func bashWithJobs(opts ...Option) []tools.Tool {
	cfg := newConfig(opts)
	b := &bashTool{cfg: cfg, jobs: &jobsKey{}}
	bash := tools.Define(b.spec(true), func(ctx context.Context, call *tools.Call, in bashJobArgs) (*harness.ToolResult, error) {
		if in.RunInBackground {
			return b.startJob(ctx, call, in)
		}
		return b.run(ctx, call, in)
	})
	return checkAll(cfg, bash, b.outputTool(), b.killTool())
}

// Tools returns every shell tool, all configured by opts: bash with a
// run_in_background argument, with bash_output(job_id, wait_ms?), which
// returns what a background job printed since the last look, and
// bash_kill(job_id), which stops a job; and the persistent shell tools
// shell_open, shell_send, shell_read and shell_close (see the package
// documentation). Background jobs have no timeout; an agent session keeps
// a bounded number of them, and all are stopped (every process they
// started) when the session closes.
//
// A host that wants only some of them keeps those by name; without
// persistent shells, for instance:
//
//	slices.DeleteFunc(shell.Tools(), func(t tools.Tool) bool { return strings.HasPrefix(t.Spec().Name, "shell_") })
//
// Register Tools' bash instead of [Bash], not beside it: both are named
// bash.
func Tools(opts ...Option) []tools.Tool {
	return append(bashWithJobs(opts...), sessions(opts...)...)
}

// checkAll makes each tool report the configuration's option errors.
func checkAll(cfg *config, ts ...tools.Tool) []tools.Tool {
	for i, t := range ts {
		ts[i] = toolexec.Checked(t, cfg.err)
	}
	return ts
}

type bashTool struct {
	cfg  *config
	jobs *jobsKey // nil without background jobs
}

func (b *bashTool) spec(jobs bool) tools.Spec {
	c := b.cfg
	var d strings.Builder
	d.WriteString("Run a bash command in a fresh, non-interactive shell and return its output.\n\n")
	d.WriteString("Each call starts a new bash (no profile or rc files) in the session's working directory, or in workdir: ")
	d.WriteString("cd, variables and functions do not carry over to the next call (a persistent shell, shell_open, keeps them when it is available). ")
	d.WriteString("Stdin is closed and the environment is set for non-interactive use (PAGER=cat, GIT_PAGER=cat, TERM=dumb, NO_COLOR=1, editors set to false, prompts off): ")
	d.WriteString("pass flags such as -y, --no-pager or -m \"message\" instead of waiting for input. ")
	d.WriteString("Full-screen terminal programs (vim, top, less, htop) are not supported; use non-interactive equivalents (sed or a file edit, ps, cat).\n\n")
	d.WriteString(c.reachText() + "\n\n")
	fmt.Fprintf(&d, "The command is stopped after timeout_ms (default %d, at most %d): SIGTERM to all its processes, then SIGKILL %s later. ",
		c.timeout.Milliseconds(), c.maxTimeout.Milliseconds(), durText(c.grace))
	d.WriteString("Where the system allows it, each command runs in a PID namespace of its own: it cannot signal processes of other commands, and pids inside it are its own. ")
	d.WriteString("Processes it leaves running in the background, also those in new sessions (setsid, nohup, daemons), are stopped when it finishes")
	if jobs {
		d.WriteString("; start servers and watchers with run_in_background instead: the call returns a job id at once, bash_output reads what the job printed since the last look, and bash_kill stops it. Background jobs have no timeout and end with the session.\n\n")
	} else {
		d.WriteString(".\n\n")
	}
	d.WriteString("The result shows stdout, then stderr, then the exit code (a non-zero exit code is reported, not a failure of this tool) and, last, the directory the command ran in. ")
	d.WriteString("Long output is cut to its head and tail; the whole of it is saved and the result names a spill:// path to read it with the read tool (offset and limit in lines).")
	return tools.Spec{
		Name:        "bash",
		Description: d.String(),
		SideEffects: true,
		Family:      tools.FamilyProcess,
		NeedsOSDir:  true,
		Deadline:    c.maxTimeout + c.grace + drainDelay + 30*time.Second,
		Render:      harness.RenderTerminal,
	}
}

func checkCommand(command string) error {
	switch {
	case strings.TrimSpace(command) == "":
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: "The command is empty. Pass the bash command line to run in command."}
	case strings.IndexByte(command, 0) >= 0:
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: "The command contains a NUL byte, which bash cannot take. Remove it and send the command again."}
	case len(command) > maxCommandBytes:
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("The command is %d bytes long; the limit is %d. Write long scripts to a file first and run the file.", len(command), maxCommandBytes)}
	}
	return nil
}

func callEnv(call *tools.Call) *tools.Env {
	if call.Env == nil {
		return &tools.Env{}
	}
	return call.Env
}

func owner(call *tools.Call) tools.Owner {
	return tools.Owner{Session: callEnv(call).SessionID, Tool: call.Name, Call: call.ID}
}

// run runs a command in the foreground.
func (b *bashTool) run(ctx context.Context, call *tools.Call, in bashJobArgs) (*harness.ToolResult, error) {
	if err := checkCommand(in.Command); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return harness.ErrorResult(harness.CodeOf(err), "The call was cancelled before the command started; nothing was run."), nil
	}
	if in.TimeoutMS < 0 {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "timeout_ms must not be negative. Leave it out for the default."}
	}
	timeout := b.cfg.timeout
	if in.TimeoutMS > 0 {
		timeout = min(time.Duration(in.TimeoutMS)*time.Millisecond, b.cfg.maxTimeout)
	}
	env := callEnv(call)
	ns, dir, argv, err := b.cfg.command(env, in.Workdir, "-c", in.Command)
	if err != nil {
		return nil, err
	}
	b.cfg.recordSandbox(ctx, call)

	rs, ws, err := pipes(2)
	if err != nil {
		return nil, err
	}
	outR, errR, outW, errW := rs[0], rs[1], ws[0], ws[1]
	start := time.Now()
	p, err := startProc(b.cfg, argv, dir, b.cfg.environ(), outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, startError(err)
	}

	saveCtx := context.WithoutCancel(ctx)
	o := owner(call)
	stdout := newCapture(saveCtx, b.cfg.outputLimit, env.Output, o, b.cfg.maxSpill)
	stderr := newCapture(saveCtx, b.cfg.outputLimit, env.Output, o, b.cfg.maxSpill)
	stdout.live = liveReport(call)
	stderr.live = stdout.live
	var copying sync.WaitGroup
	copying.Go(func() { _, _ = io.Copy(stdout, outR) })
	copying.Go(func() { _, _ = io.Copy(stderr, errR) })

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	r := runOutcome{status: statusExited, how: p.How(), partial: p.Partial()}
	select {
	case <-p.MainDone():
		r.leftovers, r.stop = p.ReapLeftovers(b.cfg.grace)
	case <-timer.C:
		r.status = statusTimeout
		r.stop = p.Stop(b.cfg.grace)
	case <-ctx.Done():
		r.status = statusCancelled
		r.stop = p.Stop(b.cfg.grace)
	}
	r.elapsed = time.Since(start)
	r.code, r.signal = p.ExitInfo()
	if r.status == statusExited && r.code == nil && r.signal != "" {
		r.status = statusKilled
	}
	drain(&copying, drainDelay, outR, errR)
	outR.Close()
	errR.Close()

	budgetOut, budgetErr := split(b.cfg.outputLimit, stdout.Total(), stderr.Total())
	so, infoOut := stdout.take(budgetOut)
	se, infoErr := stderr.take(budgetErr)

	var text, output strings.Builder
	writeStream(&output, so, infoOut, "stdout")
	if se.Total > 0 {
		ensureNewline(&output)
		output.WriteString("[stderr]\n")
		writeStream(&output, se, infoErr, "stderr")
	}
	text.WriteString(output.String())
	ensureNewline(&text)
	if so.Total == 0 && se.Total == 0 {
		text.WriteString("(no output)\n")
	}
	text.WriteString(r.trailer(timeout, b.jobs != nil))
	fmt.Fprintf(&text, "[cwd %s]", ns)

	res := &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(text.String())},
		Render: &harness.Render{
			Kind:  harness.RenderTerminal,
			Title: title(in.Description, in.Command),
			Terminal: &harness.Terminal{
				Command: in.Command, Cwd: ns, Output: output.String(),
				ExitCode: r.code, Status: r.status,
			},
		},
	}
	switch r.status {
	case statusTimeout:
		res.IsError, res.Code = true, harness.CodeTimeout
	case statusCancelled:
		res.IsError, res.Code = true, harness.CodeAborted
	}
	return res, nil
}

// drain waits for the output copiers to finish, and closes the pipes'
// read ends once delay has passed, which makes them finish.
func drain(wg *sync.WaitGroup, delay time.Duration, files ...*os.File) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-time.After(delay):
	}
	for _, f := range files {
		f.Close()
	}
	<-done
}

// Terminal statuses.
const (
	statusExited    = "exited"
	statusRunning   = "running"
	statusTimeout   = "timeout"
	statusCancelled = "cancelled"
	statusKilled    = "killed"
)

type runOutcome struct {
	status    string
	code      *int
	signal    string
	stop      proctree.Outcome
	elapsed   time.Duration
	leftovers bool
	how       string // the containment in force
	partial   bool   // the containment may not see every process
}

func (r *runOutcome) trailer(timeout time.Duration, jobs bool) string {
	var b strings.Builder
	stopped := func() {
		b.WriteString("its processes ")
		b.WriteString(r.stop.Ended(r.partial))
	}
	switch r.status {
	case statusTimeout:
		fmt.Fprintf(&b, "[timed out after %s: ", durText(timeout))
		stopped()
		b.WriteString(". It may have done part of its work: check before running it again. ")
		if jobs {
			b.WriteString("If it needs longer, raise timeout_ms or use run_in_background.]\n")
		} else {
			b.WriteString("If it needs longer, raise timeout_ms.]\n")
		}
	case statusCancelled:
		fmt.Fprintf(&b, "[cancelled after %s: ", durText(r.elapsed))
		stopped()
		b.WriteString(". It may have done part of its work.]\n")
	default:
		switch {
		case r.code != nil:
			fmt.Fprintf(&b, "[exit code %d · %s]\n", *r.code, durText(r.elapsed))
		case r.signal != "":
			fmt.Fprintf(&b, "[killed by %s · %s]\n", r.signal, durText(r.elapsed))
		default:
			fmt.Fprintf(&b, "[ended · %s; its exit status is unknown]\n", durText(r.elapsed))
		}
		if r.leftovers {
			fmt.Fprintf(&b, "[processes it left running in the background %s]\n", r.stop.Ended(r.partial))
		}
	}
	// Without a PID namespace every result names the containment: what
	// a command leaves behind may be out of sight.
	if r.status == statusTimeout || r.status == statusCancelled || r.leftovers || len(r.stop.Survivors) > 0 || r.partial {
		fmt.Fprintf(&b, "[containment: %s]\n", r.how)
	}
	return b.String()
}

// title is the one-line summary of a command for host cards.
func title(description, command string) string {
	s := strings.TrimSpace(description)
	if s == "" {
		s, _, _ = strings.Cut(strings.TrimSpace(command), "\n")
	}
	if len(s) > 80 {
		s = textcut.Prefix(s, 77) + "..."
	}
	return s
}

// durText renders a duration for the model: "450 ms", "2.5 s", "3 s",
// "2 min 5 s", "30 min".
func durText(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		s := strconv.FormatFloat(d.Seconds(), 'f', 1, 64)
		return strings.TrimSuffix(s, ".0") + " s"
	}
	d = d.Round(time.Second)
	m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
	if s == 0 {
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d min %d s", m, s)
}
