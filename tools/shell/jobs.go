package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// jobsKey is the State key of one bashWithJobs tool set's job table.
type jobsKey struct{}

// jobTable holds an agent session's background bash jobs: its view of
// the session's job registry (package jobs), which gives the jobs their
// ids, status and completion notices, with what only bash jobs have
// (processes, the output window since the last look). Closing it stops
// every job (every process it started).
type jobTable struct {
	cfg    *shellkit.Config
	reg    *jobs.Registry
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	jobs   map[string]*job
	order  []string // ids, oldest first
	closed bool
}

type job struct {
	id      string
	command string
	ns      string
	started time.Time
	p       *proctree.Proc
	out     *os.File
	rj      *jobs.Job // the job in the session's registry

	// finished is closed when the process group is gone and its output
	// has been read to the end.
	finished chan struct{}

	mu        sync.Mutex
	window    *shellkit.Capture
	stoppedBy string           // the signal bash_kill needed, "" if none
	stopped   proctree.Outcome // how the job's processes were stopped
	leftovers bool             // it ended leaving processes, which were stopped
	ended     time.Time
	delivered bool // everything up to the end was shown
	owner     tools.Owner
	store     tools.OutputStore
}

func (b *bashTool) table(call *tools.Call) (*jobTable, error) {
	st := shellkit.CallEnv(call).State
	if st == nil {
		return nil, &harness.Error{Code: harness.CodeToolFailed, Message: "Background jobs need session state, which this call does not have."}
	}
	// The registry is loaded first, so the session's state closes this
	// table (which stops the processes) before it.
	reg, err := jobs.FromState(st, jobs.Config{})
	if err != nil {
		return nil, err
	}
	return tools.LoadState(st, b.jobs, func() *jobTable {
		ctx, cancel := context.WithCancel(context.Background())
		return &jobTable{cfg: b.cfg, reg: reg, ctx: ctx, cancel: cancel, jobs: map[string]*job{}}
	})
}

// startJob starts a command as a background job.
func (b *bashTool) startJob(ctx context.Context, call *tools.Call, in bashJobArgs) (*harness.ToolResult, error) {
	if err := shellkit.CheckCommand(in.Command); err != nil {
		return nil, err
	}
	env := shellkit.CallEnv(call)
	ns, dir, argv, err := b.cfg.Command(env, in.Workdir, "-c", in.Command)
	if err != nil {
		return nil, err
	}
	t, err := b.table(call)
	if err != nil {
		return nil, err
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, &harness.Error{Code: harness.CodeAborted, Message: "The session is closing; no job was started."}
	}
	if len(t.jobs) >= t.cfg.MaxJobs && !t.evictLocked() {
		return nil, &harness.Error{Code: shellkit.CodeTooManyJobs, Message: fmt.Sprintf(
			"There are already %d background jobs running (%s), the most this session keeps. Stop one with bash_kill first.",
			len(t.jobs), strings.Join(t.order, ", "))}
	}
	j := &job{command: in.Command, ns: ns, finished: make(chan struct{}), owner: shellkit.Owner(call), store: env.Output}
	rj, err := t.reg.Start(jobs.Spec{Kind: jobs.Bash, Title: in.Command, Stop: j.stopper(t.cfg.Grace), ReadTool: "bash_output"})
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		rj.End(jobs.Result{Status: jobs.Failed, Detail: err.Error()})
		return nil, err
	}
	p, err := b.cfg.Start(argv, dir, b.cfg.Environ(), outW, outW)
	outW.Close()
	if err != nil {
		outR.Close()
		rj.End(jobs.Result{Status: jobs.Failed, Detail: err.Error()})
		return nil, shellkit.StartError(err)
	}
	j.mu.Lock()
	j.id, j.rj, j.p, j.out, j.started = rj.ID(), rj, p, outR, time.Now()
	j.mu.Unlock()
	j.window = j.newWindow(t)
	if rj.Info().Status == jobs.Stopping {
		// A stop came (job_stop, the session closing) before the
		// processes existed: the stopper found nothing to stop, so stop
		// them now; the job ends as usual once they are gone.
		go j.stopper(t.cfg.Grace)(context.Background())
	}
	t.jobs[j.id] = j
	t.order = append(t.order, j.id)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 32<<10)
		for {
			n, err := outR.Read(buf)
			if n > 0 {
				j.mu.Lock()
				_, _ = j.window.Write(buf[:n])
				j.mu.Unlock()
				_, _ = rj.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		left, out := p.ReapLeftovers(t.cfg.Grace)
		j.mu.Lock()
		j.leftovers, j.stopped = left, out
		j.mu.Unlock()
		select {
		case <-copied:
		case <-time.After(shellkit.DrainDelay):
			outR.Close()
			<-copied
		}
		outR.Close()
		j.mu.Lock()
		j.ended = time.Now()
		j.mu.Unlock()
		// The job's own view ends first, so that once the registry says
		// it ended (a notice, Wait), bash_output says so too.
		close(j.finished)
		rj.End(exitResult(p))
	}()

	text := fmt.Sprintf("Started background job %s in %s.\n"+
		"Read what it prints with bash_output (job_id %q); stop it with bash_kill. "+
		"It runs until it exits, you stop it, or the session ends.\n[containment: %s]\n[cwd %s]", j.id, ns, j.id, p.How(), ns)
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(text)},
		Render: &harness.Render{Kind: harness.RenderTerminal, Title: shellkit.Title(in.Description, in.Command),
			Terminal: &harness.Terminal{Command: in.Command, Cwd: ns, Status: shellkit.StatusRunning}},
	}, nil
}

// stopper is the job's jobs.Stopper: it stops every process of the job
// and records how. The registry then waits for the job to end.
func (j *job) stopper(grace time.Duration) jobs.Stopper {
	return func(context.Context) error {
		j.mu.Lock()
		p := j.p
		j.mu.Unlock()
		if p == nil {
			return nil // not started yet: startJob stops it once it is
		}
		out := p.Stop(grace)
		j.mu.Lock()
		j.stoppedBy, j.stopped = out.Signal, out
		j.mu.Unlock()
		return nil
	}
}

// exitResult is how a job's main process ended, for the registry.
func exitResult(p *proctree.Proc) jobs.Result {
	code, signal := p.ExitInfo()
	switch {
	case code != nil:
		return jobs.Result{ExitCode: code}
	case signal != "":
		return jobs.Result{Status: jobs.Killed, Detail: "killed by " + signal}
	default:
		return jobs.Result{Detail: "exit status unknown"}
	}
}

func (j *job) newWindow(t *jobTable) *shellkit.Capture {
	// What the job's windows save counts against the registry's cap on
	// all jobs' output (jobs.Config.MaxOutput).
	return shellkit.NewBudgetCapture(t.ctx, t.cfg.OutputLimit, j.store, j.owner, t.cfg.MaxSpill, t.reg.TakeOutput)
}

// evictLocked forgets the oldest finished job, preferring one whose
// output was all shown. It reports whether one was forgotten.
func (t *jobTable) evictLocked() bool {
	for _, wantDelivered := range []bool{true, false} {
		for i, id := range t.order {
			j := t.jobs[id]
			if !j.isFinished() {
				continue
			}
			j.mu.Lock()
			ok := j.delivered || !wantDelivered
			w := j.window
			j.mu.Unlock()
			if ok {
				w.Finish(false)
				delete(t.jobs, id)
				t.order = slices.Delete(t.order, i, i+1)
				return true
			}
		}
	}
	return false
}

func (j *job) isFinished() bool {
	select {
	case <-j.finished:
		return true
	default:
		return false
	}
}

// job returns the job table of a call's session and the job id names in it.
func (b *bashTool) job(call *tools.Call, id string) (*jobTable, *job, error) {
	t, err := b.table(call)
	if err != nil {
		return nil, nil, err
	}
	j, err := t.get(id)
	if err != nil {
		return nil, nil, err
	}
	return t, j, nil
}

func (t *jobTable) get(id string) (*job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if j, ok := t.jobs[id]; ok {
		return j, nil
	}
	if rj, err := t.reg.Get(id); err == nil && rj.Kind() == jobs.Bash {
		// A job of the session this process did not run: restored from
		// the log after a restart, or forgotten to make room.
		info := rj.Info()
		return nil, &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf(
			"Background job %s is %s: its processes are gone. Read what it printed with job_output (job_id %q).", id, info.Status, id)}
	}
	known := "There are no background jobs."
	if len(t.order) > 0 {
		known = "Known jobs: " + strings.Join(t.order, ", ") + "."
	}
	return nil, &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("There is no background job %q. %s", id, known)}
}

// take returns what the job printed since the last look, rendered for
// the model, and starts a new window.
func (j *job) take(t *jobTable, o tools.Owner) (string, bool) {
	j.mu.Lock()
	w := j.window
	fin := j.isFinished()
	if fin {
		j.delivered = true
	}
	j.owner = o
	j.window = j.newWindow(t)
	j.mu.Unlock()
	var b strings.Builder
	s, info := w.Take(t.cfg.OutputLimit)
	shellkit.WriteStream(&b, s, info, "output")
	return b.String(), s.Total > 0
}

// Close stops every job and waits for them. It returns an error matching
// harness.CodeNotStopped when processes are still running afterwards.
func (t *jobTable) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	live := shellkit.InOrder(t.order, t.jobs)
	t.mu.Unlock()
	err := shellkit.StopAll(live, func(j *job) error {
		_, _ = j.rj.Stop(context.Background()) // the stopper stops the processes; the job then ends
		out := j.p.Stop(t.cfg.Grace)           // how they were stopped (Stop is idempotent)
		<-j.finished
		j.mu.Lock()
		w := j.window
		j.mu.Unlock()
		w.Finish(false)
		return out.SurvivorsError("job " + j.id)
	})
	t.cancel()
	return err
}

type jobOutputArgs struct {
	JobID  string `json:"job_id" jsonschema:"Job id from bash, such as job1."`
	WaitMS *int   `json:"wait_ms,omitempty" jsonschema:"Milliseconds to wait for the job to end."`
}

type jobKillArgs struct {
	JobID string `json:"job_id" jsonschema:"Job id."`
}

func (b *bashTool) outputTool() tools.Tool {
	c := b.cfg
	desc := fmt.Sprintf("Read what a background job printed since the last look (stdout and stderr together). "+
		"Waits up to wait_ms (default %d, at most %d) for it to end. The result ends with its status (running, or the exit code) and directory. "+
		"Long output is cut and saved as by bash.",
		c.ReadWait.Milliseconds(), c.MaxWait.Milliseconds())
	spec := tools.Spec{Name: "bash_output", Description: desc, SideEffects: false, Family: tools.FamilyProcess,
		Deadline: c.MaxWait + 30*time.Second, Render: harness.RenderTerminal}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in jobOutputArgs) (*harness.ToolResult, error) {
		t, j, err := b.job(call, in.JobID)
		if err != nil {
			return nil, err
		}
		wait, err := shellkit.WaitArg(in.WaitMS, c.ReadWait, c.MaxWait)
		if err != nil {
			return nil, err
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-j.finished:
		case <-timer.C:
		case <-ctx.Done():
		}
		return j.result(t, call, "", ctx.Err())
	})
}

func (b *bashTool) killTool() tools.Tool {
	c := b.cfg
	desc := fmt.Sprintf("Stop a background job: SIGTERM to all its processes, SIGKILL %s later. "+
		"Returns its new output and how it ended.", shellkit.Dur(c.Grace))
	spec := tools.Spec{Name: "bash_kill", Description: desc, SideEffects: true, Family: tools.FamilyProcess,
		Deadline: c.Grace + shellkit.DrainDelay + 30*time.Second, Render: harness.RenderTerminal}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in jobKillArgs) (*harness.ToolResult, error) {
		t, j, err := b.job(call, in.JobID)
		if err != nil {
			return nil, err
		}
		note := ""
		if !j.isFinished() {
			// The registry runs the job's stopper (at most once) and waits
			// for the job to end; ending it takes the grace period and
			// the output's drain at most, so the wait is not cut short.
			_, _ = j.rj.Stop(context.WithoutCancel(ctx))
			<-j.finished
		} else {
			note = "The job had already finished.\n"
		}
		return j.result(t, call, note, nil)
	})
}

// result renders what a job printed since the last look and its status.
func (j *job) result(t *jobTable, call *tools.Call, note string, ctxErr error) (*harness.ToolResult, error) {
	output, any := j.take(t, shellkit.Owner(call))
	var b strings.Builder
	b.WriteString(note)
	b.WriteString(output)
	if !any {
		b.WriteString("(no new output)\n")
	}
	status := shellkit.StatusRunning
	var code *int
	j.mu.Lock()
	stoppedBy, stopped, leftovers, ended := j.stoppedBy, j.stopped, j.leftovers, j.ended
	j.mu.Unlock()
	if j.isFinished() {
		<-j.rj.Done() // ended in the registry right after its view (a moment at most)
		j.rj.Shown()  // the model sees how it ended: no completion notice
		var signal string
		code, signal = j.p.ExitInfo()
		el := shellkit.Dur(ended.Sub(j.started))
		partial := j.p.Partial()
		switch {
		case stoppedBy != "":
			status = shellkit.StatusKilled
			fmt.Fprintf(&b, "[job %s stopped after %s: its processes %s]\n", j.id, el, stopped.Ended(partial))
		case code != nil:
			status = shellkit.StatusExited
			fmt.Fprintf(&b, "[job %s exited with code %d after %s]\n", j.id, *code, el)
		case signal != "":
			status = shellkit.StatusKilled
			fmt.Fprintf(&b, "[job %s was killed by %s after %s]\n", j.id, signal, el)
		default:
			status = shellkit.StatusKilled
			fmt.Fprintf(&b, "[job %s ended after %s; its exit status is unknown]\n", j.id, el)
		}
		if stoppedBy == "" && leftovers {
			fmt.Fprintf(&b, "[processes it left running in the background %s]\n", stopped.Ended(partial))
		}
		if stoppedBy != "" || leftovers || len(stopped.Survivors) > 0 {
			fmt.Fprintf(&b, "[containment: %s]\n", j.p.How())
		}
	} else {
		fmt.Fprintf(&b, "[job %s is still running (for %s); call bash_output again to read more, or bash_kill to stop it]\n", j.id, shellkit.Dur(time.Since(j.started)))
	}
	fmt.Fprintf(&b, "[cwd %s]", j.ns)
	res := &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(b.String())},
		Render: &harness.Render{Kind: harness.RenderTerminal, Title: shellkit.Title("", j.command),
			Terminal: &harness.Terminal{Command: j.command, Cwd: j.ns, Output: output, ExitCode: code, Status: status}},
	}
	if ctxErr != nil {
		res.IsError = true
		res.Code = harness.CodeOf(ctxErr)
		res.Content = append(res.Content, harness.TextBlock("The wait was cut short because the call was cancelled; the job itself was not touched."))
	}
	return res, nil
}

var _ io.Closer = (*jobTable)(nil)
