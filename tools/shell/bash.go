package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/persistent"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

type bashArgs struct {
	Command     string `json:"command" jsonschema:"Bash command line; may span lines."`
	TimeoutMS   int    `json:"timeout_ms,omitzero" jsonschema:"Milliseconds before the command is stopped; clamped to the maximum."`
	Workdir     string `json:"workdir,omitzero" jsonschema:"Directory to run in."`
	Description string `json:"description,omitzero" jsonschema:"A few words for the user."`
}

type bashJobArgs struct {
	Command         string `json:"command" jsonschema:"Bash command line; may span lines."`
	TimeoutMS       int    `json:"timeout_ms,omitzero" jsonschema:"Milliseconds before it is stopped; clamped to the maximum; not with run_in_background."`
	Workdir         string `json:"workdir,omitzero" jsonschema:"Directory to run in."`
	Description     string `json:"description,omitzero" jsonschema:"A few words for the user."`
	RunInBackground bool   `json:"run_in_background,omitzero" jsonschema:"Run as a background job; its id returns at once."`
}

// Bash returns the one-shot bash tool: bash(command, timeout_ms?,
// workdir?, description?). Each call runs the command in a fresh
// non-interactive bash (no profile or rc files) with stdin closed, in
// the session's working directory or workdir (confined to the file
// system's root when the file system is OS-backed), contained so that a
// stop reaches every process it starts: in a cgroup or PID namespace of its own
// where the system allows it (see the package documentation). The
// command is stopped with SIGTERM to all its processes when its timeout
// passes or the call is cancelled, and with SIGKILL after the grace
// period. Stdout and stderr are kept apart; the model sees the head
// and tail of each, and a stream too long to show is saved whole to the
// session's output store as it arrives, so memory stays bounded whatever
// the command prints. A non-zero exit is a normal result that states the
// exit code.
//
// An invalid Config is reported by the tool's Validate method
// (harness.CodeInvalidOption), which tools.NewRegistry calls, so the
// agent loop refuses the tool; so it is for every constructor here.
func Bash(cfg Config) tools.Tool { return bashOnly(cfg.resolve()) }

// bashOnly returns the bash tool without background jobs.
func bashOnly(c *shellkit.Config) tools.Tool { return (&bashTool{cfg: c}).tools()[0] }

// bashWithJobs returns the bash tool with a run_in_background argument,
// and the two tools that go with it: bash_output(job_id, wait_ms?), which
// returns what a job printed since the last look, and bash_kill(job_id),
// which stops a job. Background jobs have no timeout; an agent session
// keeps a bounded number of them, and all are stopped (every process
// they started) when the session closes. Register these instead of
// Bash, not beside it: both tools are named bash.
func bashWithJobs(c *shellkit.Config) []tools.Tool {
	return (&bashTool{cfg: c, jobs: &jobsKey{}}).tools()
}

// Tools returns every shell tool, all configured by cfg: bash with a
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
//	slices.DeleteFunc(shell.Tools(shell.Config{}), func(t tools.Tool) bool { return strings.HasPrefix(t.Spec().Name, "shell_") })
//
// Register Tools' bash instead of [Bash], not beside it: both are named
// bash.
func Tools(cfg Config) []tools.Tool {
	c := cfg.resolve()
	return append(bashWithJobs(c), persistent.Tools(c)...)
}

type bashTool struct {
	cfg  *shellkit.Config
	jobs *jobsKey // nil without background jobs
}

// tools returns bash and, with background jobs, bash_output and
// bash_kill, each reporting the configuration's invalid values.
func (b *bashTool) tools() []tools.Tool {
	if b.jobs == nil {
		return b.cfg.Checked(tools.Define(b.spec(false), func(ctx context.Context, call *tools.Call, in bashArgs) (*harness.ToolResult, error) {
			return b.run(ctx, call, bashJobArgs{Command: in.Command, TimeoutMS: in.TimeoutMS, Workdir: in.Workdir, Description: in.Description})
		}))
	}
	bash := tools.Define(b.spec(true), func(ctx context.Context, call *tools.Call, in bashJobArgs) (*harness.ToolResult, error) {
		if in.RunInBackground {
			return b.startJob(ctx, call, in)
		}
		return b.run(ctx, call, in)
	})
	return b.cfg.Checked(bash, b.outputTool(), b.killTool())
}

func (b *bashTool) spec(jobs bool) tools.Spec {
	c := b.cfg
	var d strings.Builder
	d.WriteString("Run a command in a fresh non-interactive bash (no rc files) in the working directory, or workdir; ")
	d.WriteString("cd and variables do not carry over (shell_open, where offered, keeps them). ")
	d.WriteString("Stdin is closed; PAGER=cat, GIT_PAGER=cat, TERM=dumb, NO_COLOR=1, editors false, prompts off: pass -y, --no-pager, -m \"msg\" rather than wait for input. ")
	d.WriteString("No full-screen programs (vim, top, less).\n\n")
	d.WriteString(c.ReachText() + "\n\n")
	fmt.Fprintf(&d, "Stopped after timeout_ms (default %d, at most %d): SIGTERM to all its processes, SIGKILL %s later. ",
		c.Timeout.Milliseconds(), c.MaxTimeout.Milliseconds(), shellkit.Dur(c.Grace))
	d.WriteString("Where the system allows, each command has its own cgroup or PID namespace. ")
	d.WriteString("Processes left running, also in new sessions (setsid, nohup, daemons), are stopped when it finishes")
	if jobs {
		d.WriteString("; start servers and watchers with run_in_background: bash_output reads new output, bash_kill stops the job. Jobs have no timeout and end with the session.\n\n")
	} else {
		d.WriteString(".\n\n")
	}
	d.WriteString("Result: stdout, stderr, the exit code (non-zero is reported, not a tool failure), the directory. ")
	d.WriteString("Long output is cut to head and tail; the whole is saved at a spill:// path for read (offset, limit in lines).")
	return tools.Spec{
		Name:        "bash",
		Description: d.String(),
		SideEffects: true,
		Family:      tools.FamilyProcess,
		NeedsOSDir:  true,
		Deadline:    c.MaxTimeout + c.Grace + shellkit.DrainDelay + 30*time.Second,
		Render:      harness.RenderTerminal,
	}
}

// run runs a command in the foreground.
func (b *bashTool) run(ctx context.Context, call *tools.Call, in bashJobArgs) (*harness.ToolResult, error) {
	if err := shellkit.CheckCommand(in.Command); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return harness.ErrorResult(harness.CodeOf(err), "The call was cancelled before the command started; nothing was run."), nil
	}
	if in.TimeoutMS < 0 {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "timeout_ms must not be negative. Leave it out for the default."}
	}
	timeout := b.cfg.Timeout
	if in.TimeoutMS > 0 {
		timeout = min(time.Duration(in.TimeoutMS)*time.Millisecond, b.cfg.MaxTimeout)
	}
	env := shellkit.CallEnv(call)
	// Once this command is over, the next one's start is made in advance.
	defer b.refillSpare(env)
	p, ns, outR, errR, start, err := b.start(ctx, call, env, in)
	if err != nil {
		return nil, err
	}

	saveCtx := context.WithoutCancel(ctx)
	o := shellkit.Owner(call)
	stdout := shellkit.NewCapture(saveCtx, b.cfg.OutputLimit, env.Output, o, b.cfg.MaxSpill)
	stderr := shellkit.NewCapture(saveCtx, b.cfg.OutputLimit, env.Output, o, b.cfg.MaxSpill)
	stdout.Live = shellkit.LiveReport(call)
	stderr.Live = stdout.Live
	var copying sync.WaitGroup
	copying.Go(func() { _, _ = io.Copy(stdout, outR) })
	copying.Go(func() { _, _ = io.Copy(stderr, errR) })

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	r := runOutcome{status: shellkit.StatusExited, how: p.How(), partial: p.Partial()}
	select {
	case <-p.MainDone():
		r.leftovers, r.stop = p.ReapLeftovers(b.cfg.Grace)
	case <-timer.C:
		r.status = shellkit.StatusTimeout
		r.stop = p.Stop(b.cfg.Grace)
	case <-ctx.Done():
		r.status = shellkit.StatusCancelled
		r.stop = p.Stop(b.cfg.Grace)
	}
	r.elapsed = time.Since(start)
	r.code, r.signal = p.ExitInfo()
	if r.status == shellkit.StatusExited && r.code == nil && r.signal != "" {
		r.status = shellkit.StatusKilled
	}
	drain(&copying, shellkit.DrainDelay, outR, errR)
	outR.Close()
	errR.Close()

	budgetOut, budgetErr := shellkit.Split(b.cfg.OutputLimit, stdout.Total(), stderr.Total())
	so, infoOut := stdout.Take(budgetOut)
	se, infoErr := stderr.Take(budgetErr)

	var text, output strings.Builder
	shellkit.WriteStream(&output, so, infoOut, "stdout")
	if se.Total > 0 {
		shellkit.EnsureNewline(&output)
		output.WriteString("[stderr]\n")
		shellkit.WriteStream(&output, se, infoErr, "stderr")
	}
	text.WriteString(output.String())
	shellkit.EnsureNewline(&text)
	if so.Total == 0 && se.Total == 0 {
		text.WriteString("(no output)\n")
	}
	text.WriteString(r.trailer(timeout, b.jobs != nil))
	fmt.Fprintf(&text, "[cwd %s]", ns)

	res := &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(text.String())},
		Render: &harness.Render{
			Kind:  harness.RenderTerminal,
			Title: shellkit.Title(in.Description, in.Command),
			Terminal: &harness.Terminal{
				Command: in.Command, Cwd: ns, Output: output.String(),
				ExitCode: r.code, Status: r.status,
			},
		},
	}
	switch r.status {
	case shellkit.StatusTimeout:
		res.IsError, res.Code = true, harness.CodeTimeout
	case shellkit.StatusCancelled:
		res.IsError, res.Code = true, harness.CodeAborted
	}
	return res, nil
}

// start starts a foreground command: from the session's spare start
// when there is one (see spare.go), else from nothing. It returns the
// process, the directory's namespace path, the read ends of stdout and
// stderr, and when the command started.
func (b *bashTool) start(ctx context.Context, call *tools.Call, env *tools.Env, in bashJobArgs) (p *proctree.Proc, ns string, outR, errR *os.File, start time.Time, err error) {
	if bw, _ := b.spareSandbox(); bw != nil {
		if sp := b.sparesOf(env); sp != nil {
			if s := sp.take(b.cfg.Environ()); s != nil {
				ns, dir, argv, err := b.cfg.BashCommand(env, in.Workdir, "-c", in.Command)
				if err == nil {
					if argv, err = bw.spareBody(argv, dir, s.net); err != nil {
						err = shellkit.SandboxRefused(err)
					}
				}
				if err != nil {
					s.stop()
					return nil, "", nil, nil, time.Time{}, err
				}
				recordSandbox(ctx, call, b.cfg)
				start = time.Now()
				if err := s.launch(argv); err == nil {
					return s.p, ns, s.outR, s.errR, start, nil
				}
				// The spare's shell is gone: start from nothing.
				s.stop()
			}
		}
	}
	ns, dir, argv, err := b.cfg.Command(env, in.Workdir, "-c", in.Command)
	if err != nil {
		return nil, "", nil, nil, time.Time{}, err
	}
	recordSandbox(ctx, call, b.cfg)

	rs, ws, err := shellkit.Pipes(2)
	if err != nil {
		return nil, "", nil, nil, time.Time{}, err
	}
	outW, errW := ws[0], ws[1]
	start = time.Now()
	p, err = b.cfg.Start(argv, dir, b.cfg.Environ(), outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		rs[0].Close()
		rs[1].Close()
		return nil, "", nil, nil, time.Time{}, shellkit.StartError(err)
	}
	return p, ns, rs[0], rs[1], start, nil
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
	case shellkit.StatusTimeout:
		fmt.Fprintf(&b, "[timed out after %s: ", shellkit.Dur(timeout))
		stopped()
		b.WriteString(". It may have done part of its work: check before running it again. ")
		if jobs {
			b.WriteString("If it needs longer, raise timeout_ms or use run_in_background.]\n")
		} else {
			b.WriteString("If it needs longer, raise timeout_ms.]\n")
		}
	case shellkit.StatusCancelled:
		fmt.Fprintf(&b, "[cancelled after %s: ", shellkit.Dur(r.elapsed))
		stopped()
		b.WriteString(". It may have done part of its work.]\n")
	default:
		switch {
		case r.code != nil:
			fmt.Fprintf(&b, "[exit code %d · %s]\n", *r.code, shellkit.Dur(r.elapsed))
		case r.signal != "":
			fmt.Fprintf(&b, "[killed by %s · %s]\n", r.signal, shellkit.Dur(r.elapsed))
		default:
			fmt.Fprintf(&b, "[ended · %s; its exit status is unknown]\n", shellkit.Dur(r.elapsed))
		}
		if r.leftovers {
			fmt.Fprintf(&b, "[processes it left running in the background %s]\n", r.stop.Ended(r.partial))
		}
	}
	// Without a PID namespace every result names the containment: what
	// a command leaves behind may be out of sight.
	if r.status == shellkit.StatusTimeout || r.status == shellkit.StatusCancelled || r.leftovers || len(r.stop.Survivors) > 0 || r.partial {
		fmt.Fprintf(&b, "[containment: %s]\n", r.how)
	}
	return b.String()
}

// sandboxRecord is what the session log keeps of the sandbox in force.
type sandboxRecord struct {
	Sandbox string `json:"sandbox"`
	// Environment says what commands get of the host's environment: the
	// names withheld, never values.
	Environment string `json:"environment,omitempty"`
}

type sandboxRecordedKey struct{}

// recordSandbox writes the sandbox in force to the session log, once
// per session (shells record theirs when they open).
func recordSandbox(ctx context.Context, call *tools.Call, c *shellkit.Config) {
	env := shellkit.CallEnv(call)
	if env == nil || env.State == nil || env.Record == nil {
		return
	}
	once, err := tools.LoadState(env.State, sandboxRecordedKey{}, func() *sync.Once { return new(sync.Once) })
	if err != nil {
		return
	}
	once.Do(func() {
		rec := sandboxRecord{Sandbox: c.SandboxText(), Environment: c.EnvText()}
		if err := env.Record(ctx, call, "sandbox", rec); err != nil && env.Logger != nil {
			env.Logger.Warn("recording the sandbox failed", "error", err)
		}
	})
}
