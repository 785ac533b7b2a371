package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
)

// Kind says what a job runs. The library's kinds are Bash and Agent; a
// host may use any other short snake_case string for its own.
type Kind string

// The kinds the library starts.
const (
	Bash  Kind = "bash"
	Agent Kind = "agent"
)

// Status is where a job stands.
type Status string

// The statuses of a job. Running and Stopping are live; the others are
// final.
const (
	// Running: the job is at work.
	Running Status = "running"
	// Stopping: a stop was asked and the job has not ended yet.
	Stopping Status = "stopping"
	// Completed: the job ended by itself (a command exited, whatever its
	// exit status; a sub-agent gave its final answer).
	Completed Status = "completed"
	// Killed: the job was stopped, or a signal ended it.
	Killed Status = "killed"
	// Failed: the job could not finish its work (a sub-agent's error).
	Failed Status = "failed"
	// Lost: the process that ran the job ended (a crash, a restart)
	// before the job did, so how it ended is not known.
	Lost Status = "lost"
)

// Final reports whether s is a status a job ends with.
func (s Status) Final() bool {
	switch s {
	case Completed, Killed, Failed, Lost:
		return true
	}
	return false
}

// CodeTooManyJobs ("too_many_jobs") is reported by Start when the
// registry already runs Config.MaxRunning jobs, or keeps Config.MaxKept
// jobs none of which has ended. It is the code the shell tools report for
// the same condition.
const CodeTooManyJobs harness.Code = "too_many_jobs"

// Defaults of Config.
const (
	DefaultMaxRunning = 16
	DefaultMaxKept    = 64
	DefaultWindow     = 64 << 10
	DefaultMaxOutput  = 1 << 30
)

// Config bounds a Registry. Its zero value is the default.
type Config struct {
	// MaxRunning is how many jobs may run (or be stopping) at once.
	// 0 means DefaultMaxRunning.
	MaxRunning int
	// MaxKept is how many jobs the registry remembers, running or ended.
	// When a new job would pass it, the oldest ended job is forgotten.
	// 0 means DefaultMaxKept.
	MaxKept int
	// Window is how many of its last output bytes each job keeps in
	// memory for Read. 0 means DefaultWindow.
	Window int
	// MaxOutput is how many output bytes all jobs together may pass to
	// their Spec.Spill. Output past it is still counted and kept in the
	// window, but no longer spilled (Info.Unspilled counts it). 0 means
	// DefaultMaxOutput.
	MaxOutput int64
	// OnEnd, when set, is called once per job after it ends, with its
	// final Info, outside the registry's locks. It must not block.
	OnEnd func(Info)
	// Now, when set, replaces time.Now (for tests).
	Now func() time.Time
}

func (c Config) resolved() Config {
	if c.MaxRunning <= 0 {
		c.MaxRunning = DefaultMaxRunning
	}
	if c.MaxKept <= 0 {
		c.MaxKept = DefaultMaxKept
	}
	c.MaxKept = max(c.MaxKept, c.MaxRunning)
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// A Stopper ends a running job: it signals the job's work to stop and
// may wait for it, until ctx ends. The job reports its end through
// Job.End as usual; the registry waits for that after Stop returns.
type Stopper func(ctx context.Context) error

// Spec describes a job to start.
type Spec struct {
	// Kind is required.
	Kind Kind
	// Title says in a few words what the job does (a command, a task).
	Title string
	// Stop ends the job; required.
	Stop Stopper
	// ReadTool names the tool that reads the job's output, given the
	// job_id, in notices; empty means job_output.
	ReadTool string
	// Spill, when set, receives the job's whole output as it arrives
	// (the kind's spill to the output store), up to Config.MaxOutput
	// for the registry as a whole. Its errors are ignored.
	Spill interface{ Write(p []byte) (int, error) }
}

// Result is how a job ended, as its kind reports it to Job.End.
type Result struct {
	// Status is a final status; empty means Completed, or Killed when a
	// stop was asked.
	Status Status
	// ExitCode is a command's exit status, when it has one.
	ExitCode *int
	// Answer is a sub-agent's final answer.
	Answer string
	// Detail says more in one line (the signal that killed a command,
	// the error a sub-agent failed with).
	Detail string
}

// Info is a snapshot of a job.
type Info struct {
	ID      string    `json:"id"`
	Kind    Kind      `json:"kind"`
	Title   string    `json:"title,omitempty"`
	Status  Status    `json:"status"`
	Started time.Time `json:"started"`
	// Ended is zero while the job is live.
	Ended    time.Time `json:"ended,omitzero"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Answer   string    `json:"answer,omitempty"`
	Detail   string    `json:"detail,omitempty"`
	// Output is how many bytes the job has printed.
	Output int64 `json:"output"`
	// Unspilled is how many of them were not passed to the spill because
	// the registry's MaxOutput was reached.
	Unspilled int64 `json:"unspilled,omitempty"`
	// ReadTool names the tool that reads the output (Spec.ReadTool).
	ReadTool string `json:"read_tool,omitempty"`
}

// Notice is the one line that tells the model a job ended and how to
// read what it printed.
func (i Info) Notice() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s (%s) %s", i.ID, i.Kind, i.Status)
	if i.ExitCode != nil {
		fmt.Fprintf(&b, ", exit %d", *i.ExitCode)
	}
	if i.Detail != "" {
		fmt.Fprintf(&b, " (%s)", oneLine(i.Detail, 200))
	}
	tool := i.ReadTool
	if tool == "" {
		tool = "job_output"
	}
	fmt.Fprintf(&b, "; read it with %s {\"job_id\":%q}", tool, i.ID)
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "..."
	}
	return s
}

// Registry holds the jobs of one session. It is safe for concurrent use.
// Create one with New (or FromState); close it with StopAll or Close,
// which stop every live job.
type Registry struct {
	cfg Config

	mu      sync.Mutex
	jobs    map[string]*Job
	order   []string // ids, oldest first
	next    int
	spilled int64
	ended   []*Job // ended since the last TakeEnded
	closed  bool
}

// New returns an empty registry bounded by cfg.
func New(cfg Config) *Registry {
	return &Registry{cfg: cfg.resolved(), jobs: map[string]*Job{}}
}

// Start registers a new running job and returns it. The caller then
// starts the work, writes its output to the Job and calls Job.End when
// it ends. Start fails with CodeTooManyJobs when the limits are reached
// and with harness.CodeClosed once the registry is closed.
func (r *Registry) Start(spec Spec) (*Job, error) {
	if spec.Kind == "" || spec.Stop == nil {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "jobs: a Spec needs a Kind and a Stop"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, &harness.Error{Code: harness.CodeClosed, Message: "jobs: the registry is closed (the session is ending); no job was started"}
	}
	live := r.liveLocked()
	if len(live) >= r.cfg.MaxRunning {
		return nil, &harness.Error{Code: CodeTooManyJobs, Message: fmt.Sprintf(
			"%d jobs are running (%s), the most this session allows at once. Stop one with job_stop, or wait for one to end.",
			len(live), strings.Join(live, ", "))}
	}
	if len(r.order) >= r.cfg.MaxKept && !r.evictLocked() {
		return nil, &harness.Error{Code: CodeTooManyJobs, Message: fmt.Sprintf(
			"The session keeps %d jobs and none has ended. Stop one with job_stop first.", len(r.order))}
	}
	r.next++
	j := &Job{
		r: r, id: fmt.Sprintf("job%d", r.next), spec: spec,
		window: newRing(r.cfg.Window), done: make(chan struct{}),
	}
	j.info = Info{ID: j.id, Kind: spec.Kind, Title: spec.Title, Status: Running, Started: r.cfg.Now(), ReadTool: spec.ReadTool}
	r.jobs[j.id] = j
	r.order = append(r.order, j.id)
	return j, nil
}

func (r *Registry) liveLocked() []string {
	var live []string
	for _, id := range r.order {
		if j := r.jobs[id]; !j.Ended() {
			live = append(live, id)
		}
	}
	return live
}

// evictLocked forgets the oldest ended job.
func (r *Registry) evictLocked() bool {
	for i, id := range r.order {
		if r.jobs[id].Ended() {
			delete(r.jobs, id)
			r.order = slices.Delete(r.order, i, i+1)
			return true
		}
	}
	return false
}

// Get returns the job id names; it fails with harness.CodeNotFound,
// naming the jobs there are, when there is none.
func (r *Registry) Get(id string) (*Job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j, ok := r.jobs[id]; ok {
		return j, nil
	}
	known := "There are no jobs."
	if len(r.order) > 0 {
		known = "Known jobs: " + strings.Join(r.order, ", ") + "."
	}
	return nil, &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("There is no job %q. %s", id, known)}
}

// List returns a snapshot of every job the registry keeps, oldest first.
func (r *Registry) List() []Info {
	r.mu.Lock()
	js := make([]*Job, 0, len(r.order))
	for _, id := range r.order {
		js = append(js, r.jobs[id])
	}
	r.mu.Unlock()
	out := make([]Info, len(js))
	for i, j := range js {
		out[i] = j.Info()
	}
	return out
}

// Stop asks the job id to stop and waits, until ctx ends, for it to end.
// It returns the job's Info then (still Stopping if ctx ended first). A
// job that has already ended is returned as it is.
func (r *Registry) Stop(ctx context.Context, id string) (Info, error) {
	j, err := r.Get(id)
	if err != nil {
		return Info{}, err
	}
	return j.Stop(ctx)
}

// Wait waits, until ctx ends, for the job id to end, and returns its
// Info. When ctx ends first it returns the live Info and ctx's error.
func (r *Registry) Wait(ctx context.Context, id string) (Info, error) {
	j, err := r.Get(id)
	if err != nil {
		return Info{}, err
	}
	select {
	case <-j.done:
		return j.Info(), nil
	case <-ctx.Done():
		return j.Info(), ctx.Err()
	}
}

// TakeEnded returns the jobs that ended since the last call, in the
// order they ended, and forgets them. Jobs whose end a tool already
// showed the model (Job.Shown) are left out. It is how completion notices are
// gathered (see Notices).
func (r *Registry) TakeEnded() []Info {
	r.mu.Lock()
	ended := r.ended
	r.ended = nil
	r.mu.Unlock()
	var out []Info
	for _, j := range ended {
		j.mu.Lock()
		shown, info := j.shown, j.info
		j.mu.Unlock()
		if !shown {
			out = append(out, info)
		}
	}
	return out
}

// Lose records a job known from elsewhere (a session's log, after a
// restart) that cannot still be running: it is kept with status Lost,
// its id reserved, and the output given kept in its window. A job
// recorded as ended keeps its status; one made Lost is queued for
// TakeEnded, so the model is told. Lose fails with harness.CodeExists
// when the registry already has a job of that id.
func (r *Registry) Lose(info Info, output []byte) (*Job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.jobs[info.ID]; ok || info.ID == "" {
		return nil, &harness.Error{Code: harness.CodeExists, Message: fmt.Sprintf("jobs: the registry already has a job %q", info.ID)}
	}
	if len(r.order) >= r.cfg.MaxKept {
		r.evictLocked()
	}
	var n int
	if _, err := fmt.Sscanf(info.ID, "job%d", &n); err == nil && n > r.next {
		r.next = n
	}
	lost := !info.Status.Final()
	if lost {
		info.Status = Lost
		if info.Ended.IsZero() {
			info.Ended = r.cfg.Now()
		}
	}
	j := &Job{r: r, id: info.ID, spec: Spec{Kind: info.Kind, Title: info.Title, ReadTool: info.ReadTool},
		window: newRing(r.cfg.Window), done: make(chan struct{}), info: info}
	j.window.write(output)
	j.info.Output = max(info.Output, int64(len(output)))
	close(j.done)
	r.jobs[j.id] = j
	r.order = append(r.order, j.id)
	if lost {
		r.ended = append(r.ended, j)
	}
	return j, nil
}

// Reattach records a job known from elsewhere (a session's log, after a
// restart) whose work this process takes up again: a sub-agent whose
// session was paused, waiting for an answer, when the process ended. The
// job keeps its id, kind, title and start time, and the output given is
// kept in its window; it is running, stopped by spec.Stop, and ends with
// Job.End as any other. spec's Kind and Title, when empty, are info's.
// Reattach fails as Start does at the limits, and with
// harness.CodeExists when the registry already has a job of that id.
func (r *Registry) Reattach(info Info, output []byte, spec Spec) (*Job, error) {
	if spec.Kind == "" {
		spec.Kind = info.Kind
	}
	if spec.Title == "" {
		spec.Title = info.Title
	}
	if spec.ReadTool == "" {
		spec.ReadTool = info.ReadTool
	}
	if spec.Stop == nil || info.ID == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "jobs: Reattach needs the job's id and a Stop"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return nil, &harness.Error{Code: harness.CodeClosed, Message: "jobs: the registry is closed (the session is ending); no job was taken up again"}
	case r.jobs[info.ID] != nil:
		return nil, &harness.Error{Code: harness.CodeExists, Message: fmt.Sprintf("jobs: the registry already has a job %q", info.ID)}
	}
	if live := r.liveLocked(); len(live) >= r.cfg.MaxRunning {
		return nil, &harness.Error{Code: CodeTooManyJobs, Message: fmt.Sprintf(
			"%d jobs are running (%s), the most this session allows at once; job %s could not be taken up again", len(live), strings.Join(live, ", "), info.ID)}
	}
	if len(r.order) >= r.cfg.MaxKept && !r.evictLocked() {
		return nil, &harness.Error{Code: CodeTooManyJobs, Message: fmt.Sprintf(
			"The session keeps %d jobs and none has ended; job %s could not be taken up again.", len(r.order), info.ID)}
	}
	var n int
	if _, err := fmt.Sscanf(info.ID, "job%d", &n); err == nil && n > r.next {
		r.next = n
	}
	started := info.Started
	if started.IsZero() {
		started = r.cfg.Now()
	}
	j := &Job{r: r, id: info.ID, spec: spec, window: newRing(r.cfg.Window), done: make(chan struct{})}
	j.info = Info{ID: info.ID, Kind: spec.Kind, Title: spec.Title, Status: Running, Started: started, ReadTool: spec.ReadTool}
	j.window.write(output)
	j.info.Output = max(info.Output, int64(len(output)))
	r.jobs[j.id] = j
	r.order = append(r.order, j.id)
	return j, nil
}

// TakeOutput counts n bytes of output a kind spills through its own
// writer (not Spec.Spill: the bash jobs' saved windows) against
// Config.MaxOutput, the cap on what all the registry's jobs spill, and
// returns how many of them may be spilled: n, less once the cap is near,
// 0 past it.
func (r *Registry) TakeOutput(n int64) int64 {
	if n <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	allowed := min(n, max(0, r.cfg.MaxOutput-r.spilled))
	r.spilled += allowed
	return allowed
}

// StopAll stops every live job, waiting until ctx ends for them to end,
// and refuses new ones. It returns the stoppers' errors joined, and
// ctx's error when jobs were still live when it ended.
func (r *Registry) StopAll(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	var live []*Job
	for _, id := range r.order {
		if j := r.jobs[id]; !j.Ended() {
			live = append(live, j)
		}
	}
	r.mu.Unlock()
	errs := make([]error, len(live))
	var wg sync.WaitGroup
	for i, j := range live {
		wg.Go(func() {
			_, errs[i] = j.Stop(ctx)
		})
	}
	wg.Wait()
	return joinErrs(errs)
}

func joinErrs(errs []error) error {
	var msgs []string
	var first error
	for _, e := range errs {
		if e != nil {
			if first == nil {
				first = e
			}
			msgs = append(msgs, e.Error())
		}
	}
	if first == nil {
		return nil
	}
	if len(msgs) == 1 {
		return first
	}
	return &harness.Error{Code: harness.CodeOf(first), Message: "jobs: " + strings.Join(msgs, "; "), Err: first}
}

// Job is one job of a Registry. Its kind writes the job's output to it
// (it is an io.Writer) and calls End once when the work ends.
type Job struct {
	r    *Registry
	id   string
	spec Spec
	done chan struct{}

	mu       sync.Mutex
	info     Info
	window   *ring
	stopping bool
	shown    bool
	stopOnce sync.Once
	stopErr  error
}

// ID returns the job's id, such as job3.
func (j *Job) ID() string { return j.id }

// Kind returns the job's kind.
func (j *Job) Kind() Kind { return j.spec.Kind }

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Ended reports whether the job has ended.
func (j *Job) Ended() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// Info returns a snapshot of the job.
func (j *Job) Info() Info {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.info
}

// Write records output of the job: it is kept in the job's window and
// passed to Spec.Spill while the registry's MaxOutput allows. It never
// fails; output after End is dropped.
func (j *Job) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	j.mu.Lock()
	if j.info.Status.Final() {
		j.mu.Unlock()
		return len(p), nil
	}
	j.info.Output += int64(len(p))
	j.window.write(p)
	spill := j.spec.Spill
	j.mu.Unlock()
	if spill == nil {
		return len(p), nil
	}
	r := j.r
	r.mu.Lock()
	allowed := min(int64(len(p)), max(0, r.cfg.MaxOutput-r.spilled))
	r.spilled += allowed
	r.mu.Unlock()
	if allowed > 0 {
		_, _ = spill.Write(p[:allowed])
	}
	if rest := int64(len(p)) - allowed; rest > 0 {
		j.mu.Lock()
		j.info.Unspilled += rest
		j.mu.Unlock()
	}
	return len(p), nil
}

// End records how the job ended. Only the first call counts; it closes
// Done, queues the job for TakeEnded and calls Config.OnEnd.
func (j *Job) End(res Result) {
	j.mu.Lock()
	if j.info.Status.Final() {
		j.mu.Unlock()
		return
	}
	st := res.Status
	if !st.Final() {
		st = Completed
		if j.stopping {
			st = Killed
		}
	}
	j.info.Status, j.info.Ended = st, j.r.cfg.Now()
	j.info.ExitCode, j.info.Answer, j.info.Detail = res.ExitCode, res.Answer, res.Detail
	info := j.info
	j.mu.Unlock()
	j.r.mu.Lock()
	j.r.ended = append(j.r.ended, j)
	j.r.mu.Unlock()
	close(j.done)
	if j.r.cfg.OnEnd != nil {
		j.r.cfg.OnEnd(info)
	}
}

// Stop asks the job to stop (once: its Stopper runs at most once) and
// waits, until ctx ends, for it to end. It returns the job's Info and
// the Stopper's error, or ctx's when the job was still live when ctx
// ended.
func (j *Job) Stop(ctx context.Context) (Info, error) {
	if j.Ended() {
		return j.Info(), nil
	}
	j.mu.Lock()
	if !j.info.Status.Final() {
		j.stopping = true
		j.info.Status = Stopping
	}
	j.mu.Unlock()
	j.stopOnce.Do(func() { j.stopErr = j.spec.Stop(ctx) })
	select {
	case <-j.done:
		return j.Info(), j.stopErr
	case <-ctx.Done():
		if j.stopErr != nil {
			return j.Info(), j.stopErr
		}
		return j.Info(), &harness.Error{Code: harness.CodeNotStopped, Message: fmt.Sprintf(
			"job %s (%s) did not end before the wait for it ended; it may still be running", j.id, j.spec.Kind), Err: ctx.Err()}
	}
}

// Window is a part of a job's output, as Read returns it.
type Window struct {
	// Offset is the offset of Data in the job's output; it is past the
	// offset asked for when the bytes before it are no longer kept.
	Offset int64
	Data   []byte
	// Next is the offset to read from next time.
	Next int64
	// Total is how many bytes the job has printed so far.
	Total int64
	// Skipped is how many bytes between the offset asked for and Offset
	// are no longer kept in memory.
	Skipped int64
}

// Read returns up to limit bytes of the job's output from offset, out of
// what its window still holds (the last Config.Window bytes). A negative
// offset counts back from the end. limit <= 0 means the whole window.
func (j *Job) Read(offset int64, limit int) Window {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.window.read(offset, limit)
}

// Shown records that a tool showed the model how the job ended (bash_output
// returning its exit status, say), so no completion notice repeats it. It
// does nothing while the job is live.
func (j *Job) Shown() {
	j.mu.Lock()
	if j.info.Status.Final() {
		j.shown = true
	}
	j.mu.Unlock()
}
