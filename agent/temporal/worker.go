package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// Config configures a Worker. The zero value of each optional field is
// its default.
type Config struct {
	// Client is the connection to the Temporal server. Required.
	Client client.Client
	// TaskQueue is the queue clients start turns on (DefaultTaskQueue
	// when empty). Each worker also polls a queue of its own, named after
	// it, where the turns of the sessions it holds open are sent.
	TaskQueue string
	// Agent are the options of the agent.Loop the worker runs sessions
	// with, as agent.New takes them: the model, tools, permissions,
	// hooks. Its session store (agent.WithStores) must be one every
	// worker shares, such as session/postgres; the store's lock is what
	// keeps two workers from writing one session. Required.
	Agent []agent.Option
	// Store is the session store the options give the loop: the worker
	// reads turn numbers from it. Required.
	Store session.Store
	// Worker are the Temporal worker options of both pollers. The zero
	// value hands a workflow cached on a worker that died to another
	// after a second, and lets workflow code go ten seconds without
	// yielding (the SDK's default is one) before the SDK calls it
	// deadlocked: the turn workflow never blocks, so a stall is a loaded
	// machine's, and failing a workflow task (or the Status query that
	// replays it) for it only shows a client an error.
	Worker worker.Options
	// KeepOpen is how long a session stays open on the worker after a
	// run, so that its next turn (or its answer after a pause) finds its
	// tool state (shells, jobs, the file ledger) and loads nothing: one
	// minute when zero; negative closes it at once. An open session holds
	// the store's lock: a turn of it that reaches another worker
	// meanwhile (Client.Start sends it to this one first, so only when
	// this worker did not take it within two seconds, overloaded say)
	// is retried there until this worker lets the session go, up to
	// KeepOpen later. Keep it short where workers are busy.
	KeepOpen time.Duration
	// MaxOpen bounds the sessions kept open (64 when zero); the least
	// recently used is closed first.
	MaxOpen int
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// deadlockAfter is the default of Config.Worker.DeadlockDetectionTimeout.
const deadlockAfter = 10 * time.Second

// Worker runs the turns of agent sessions as Temporal workflows: it
// registers the turn workflow on the task queue and runs each turn in an
// activity on an agent.Loop of its own.
type Worker struct {
	cfg      Config
	loop     *agent.Loop
	queue    string
	ownQueue string
	shared   worker.Worker
	own      worker.Worker
	logger   *slog.Logger

	mu     sync.Mutex
	open   map[string]*entry
	closed bool
	// notices are the moved notices to give each session's model.
	notices map[string]string
}

// entry is a session open on the worker.
type entry struct {
	id string
	// mu is held by the run using the session.
	mu   sync.Mutex
	sess *agent.Session
	// task is the sub-agent task the session runs, for a child turn
	// (TurnInput.Task); closing it closes sess.
	task    *agent.Task
	running bool // guarded by Worker.mu
	used    time.Time
	timer   *time.Timer
}

// NewWorker builds a worker; Start starts it.
func NewWorker(cfg Config) (*Worker, error) {
	if cfg.Client == nil {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: "temporal: Config.Client is nil: dial the Temporal server with client.Dial and pass the client"}
	}
	if cfg.Store == nil {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: "temporal: Config.Store is nil: pass the session store the agent options use (agent.WithStores)"}
	}
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = DefaultTaskQueue
	}
	if cfg.KeepOpen == 0 {
		cfg.KeepOpen = time.Minute
	}
	if cfg.MaxOpen <= 0 {
		cfg.MaxOpen = 64
	}
	if cfg.Worker.StickyScheduleToStartTimeout == 0 {
		cfg.Worker.StickyScheduleToStartTimeout = time.Second
	}
	if cfg.Worker.DeadlockDetectionTimeout == 0 {
		cfg.Worker.DeadlockDetectionTimeout = deadlockAfter
	}
	w := &Worker{cfg: cfg, queue: cfg.TaskQueue, open: map[string]*entry{}, notices: map[string]string{}}
	w.logger = cfg.Logger
	if w.logger == nil {
		w.logger = slog.New(slog.DiscardHandler)
	}
	opts := append([]agent.Option{}, cfg.Agent...)
	opts = append(opts, agent.WithHooks(agent.Hooks{Steps: []tools.StepObserver{w.movedNotice}}))
	// Sub-agents run as child workflows: a task call pauses the parent's
	// turn (awaiting_tool), and the workflow answers it.
	opts = append(opts, agent.WithExternalTools(taskTool))
	loop, err := agent.New(opts...)
	if err != nil {
		return nil, err
	}
	w.loop = loop
	var b [6]byte
	_, _ = rand.Read(b[:])
	w.ownQueue = cfg.TaskQueue + "/worker-" + hex.EncodeToString(b[:])

	w.shared = worker.New(cfg.Client, w.queue, cfg.Worker)
	w.shared.RegisterWorkflowWithOptions(w.turnWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	w.shared.RegisterActivityWithOptions(w.prepare, activity.RegisterOptions{Name: actPrepare})
	w.shared.RegisterActivityWithOptions(w.runTurn, activity.RegisterOptions{Name: actRun})
	ownOpts := cfg.Worker
	ownOpts.DisableWorkflowWorker = true
	w.own = worker.New(cfg.Client, w.ownQueue, ownOpts)
	w.own.RegisterActivityWithOptions(w.runTurn, activity.RegisterOptions{Name: actRun})
	w.own.RegisterActivityWithOptions(w.deliver, activity.RegisterOptions{Name: actDeliver})
	w.own.RegisterActivityWithOptions(w.prepare, activity.RegisterOptions{Name: actPrepare})
	return w, nil
}

// Start starts polling; it returns once both pollers run.
func (w *Worker) Start() error {
	if err := w.own.Start(); err != nil {
		return err
	}
	if err := w.shared.Start(); err != nil {
		w.own.Stop()
		return err
	}
	return nil
}

// Run starts the worker and stops it when ctx is done.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	return w.Stop()
}

// Stop stops polling, and closes the open sessions and the loop. Turns
// still running when the stop timeout (Config.Worker.WorkerStopTimeout)
// passes are cancelled and end cancelled, as a cancelled turn of the
// agent loop does; to move them to another worker instead, kill the
// process (they go on from the log there).
func (w *Worker) Stop() error {
	w.shared.Stop()
	w.own.Stop()
	w.mu.Lock()
	w.closed = true
	for _, e := range w.open {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	w.open = map[string]*entry{}
	w.mu.Unlock()
	return w.loop.Close()
}

// TaskQueue returns the queue of this worker alone.
func (w *Worker) TaskQueue() string { return w.ownQueue }

// permanent marks an error no retry can mend.
func permanent(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), "harness.permanent", err)
}

// prepare opens the session on this worker (creating it when it does
// not exist and in.Create is set), keeps it open for the run that
// follows, and returns its turns and this worker's queue.
func (w *Worker) prepare(ctx context.Context, in prepareInput) (prepared, error) {
	e, _, err := w.acquire(ctx, in.SessionID, in.Create, in.Task)
	if err != nil {
		return prepared{}, err
	}
	p := prepared{Worker: w.ownQueue}
	if e.sess != nil {
		p.Turns = e.sess.Turns()
	}
	w.release(e, true)
	return p, nil
}

func countTurns(events []session.Event) int {
	n := 0
	for _, e := range events {
		if u, ok := e.Data.(*session.UserMessage); ok && !u.Steer {
			n++
		}
	}
	return n
}

// acquire returns the session open on this worker, or opens it: resumes
// it, or creates it when it does not exist and create is set. moved
// says it was not open here.
func (w *Worker) acquire(ctx context.Context, id string, create *session.Header, task *TaskCall) (e *entry, moved bool, err error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, false, errors.New("temporal: the worker is stopping")
	}
	e = w.open[id]
	if e == nil {
		e = &entry{id: id}
		w.open[id] = e
	}
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	w.mu.Unlock()
	// One run at a time: a run that lost its worker's lease may still
	// be ending here.
	if err := lockCtx(ctx, &e.mu); err != nil {
		return nil, false, err
	}
	if e.sess != nil || e.task != nil {
		return e, false, nil
	}
	if task != nil {
		return w.acquireTask(ctx, e, id, task)
	}
	var sess *agent.Session
	if create != nil {
		// Most sessions given a header are new: try that first.
		h := *create
		h.ID = id
		sess, err = w.loop.NewSession(ctx, h)
		if err == nil {
			e.sess = sess
			return e, false, nil
		}
		if !errors.Is(err, harness.CodeExists) {
			e.mu.Unlock()
			w.drop(e)
			if errors.Is(err, harness.CodeInvalidID) {
				return nil, false, permanent(err)
			}
			return nil, false, err
		}
	}
	sess, err = w.loop.ResumeSession(ctx, id)
	if errors.Is(err, harness.CodeNotFound) && create != nil {
		h := *create
		h.ID = id
		sess, err = w.loop.NewSession(ctx, h)
		if errors.Is(err, harness.CodeExists) {
			sess, err = w.loop.ResumeSession(ctx, id)
		} else if err == nil {
			e.sess = sess
			return e, false, nil
		}
	}
	if err != nil {
		e.mu.Unlock()
		w.drop(e)
		if errors.Is(err, harness.CodeInvalidID) || errors.Is(err, harness.CodeNotFound) {
			return nil, false, permanent(err)
		}
		return nil, false, err
	}
	e.sess = sess
	if sess.Turns() > 0 {
		w.noteMoved(sess)
	}
	return e, true, nil
}

// lockCtx locks mu, or gives up when ctx ends.
func lockCtx(ctx context.Context, mu *sync.Mutex) error {
	for !mu.TryLock() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// release ends a run's use of e: the session stays open for KeepOpen,
// or closes now when it must not stay (broken, or the worker keeps none).
func (w *Worker) release(e *entry, keep bool) {
	if !keep || w.cfg.KeepOpen < 0 {
		w.closeEntry(e)
		return
	}
	w.mu.Lock()
	e.used = time.Now()
	if w.closed {
		w.mu.Unlock()
		w.closeEntry(e)
		return
	}
	e.timer = time.AfterFunc(w.cfg.KeepOpen, func() { w.expire(e) })
	var oldest *entry
	if len(w.open) > w.cfg.MaxOpen {
		for _, o := range w.open {
			if o != e && o.timer != nil && (oldest == nil || o.used.Before(oldest.used)) {
				oldest = o
			}
		}
	}
	w.mu.Unlock()
	e.mu.Unlock()
	if oldest != nil {
		w.expire(oldest)
	}
}

// expire closes an idle session.
func (w *Worker) expire(e *entry) {
	if !e.mu.TryLock() {
		return // in use again
	}
	w.mu.Lock()
	idle := e.timer != nil
	w.mu.Unlock()
	if !idle {
		e.mu.Unlock()
		return
	}
	w.closeEntry(e)
}

// closeEntry closes e's session; e.mu is held.
func (w *Worker) closeEntry(e *entry) {
	if e.task != nil {
		if err := e.task.Close(); err != nil {
			w.logger.Warn("closing a sub-agent's session", "session", e.id, "error", err)
		}
		e.task, e.sess = nil, nil
	}
	if e.sess != nil {
		if err := e.sess.Close(); err != nil {
			w.logger.Warn("closing a session", "session", e.id, "error", err)
		}
		e.sess = nil
	}
	w.drop(e)
	e.mu.Unlock()
}

func (w *Worker) drop(e *entry) {
	w.mu.Lock()
	if w.open[e.id] == e {
		delete(w.open, e.id)
	}
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	w.mu.Unlock()
}

// heartbeat records heartbeats until stop is called, so the server
// notices within the heartbeat timeout that this worker died, and the
// run hears of a cancelled turn.
func heartbeat(ctx context.Context) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(400 * time.Millisecond)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(quit); <-done }
}

// runTurn runs the turn on this worker: its start, its continuation
// after the worker that ran it died, or its answer after a pause. What
// is done is read from the log, so a run repeated does only what the log
// lacks, and a tool call whose start is logged is never run again.
func (w *Worker) runTurn(ctx context.Context, in runInput) (out runOutput, err error) {
	stop := heartbeat(ctx)
	defer stop()
	e, moved, err := w.acquire(ctx, in.SessionID, in.Create, in.Task)
	if err != nil {
		return out, err
	}
	keep := true
	defer func() { w.release(e, keep) }()
	if e.task != nil && e.task.Refused != nil {
		// The task call is refused without a child (as the plain loop
		// refuses it): its result answers the parent.
		a := *e.task.Refused
		out.Result = TurnResult{SessionID: in.SessionID, Turn: in.Turn, Reason: session.ReasonCompleted, Worker: w.ownQueue, Tool: &a}
		return out, nil
	}
	sess := e.sess
	out.Moved = moved
	prompt := in.Prompt
	if e.task != nil {
		prompt = e.task.Prompt
	}
	var fw *forwarder
	if in.Stream {
		fw = newForwarder(w.cfg.Client, in.WorkflowID, in.RunID, in.Sent)
		defer fw.close()
	}
	turnCtx, stopTurn := turnContext(ctx)
	defer stopTurn()
	turns := sess.Turns()
	var events func(yield func(agent.Event, error) bool)
	switch {
	case in.Answers != nil && sess.Paused() != nil:
		events = sess.Answer(turnCtx, *in.Answers)
	case turns == in.Turn-1 && in.Answers == nil:
		events = sess.Run(turnCtx, prompt)
	case turns == in.Turn && sess.Interrupted():
		events = sess.Continue(turnCtx)
		out.Cut = w.cutOffs(ctx, in.SessionID)
	case turns == in.Turn:
		// Done already (a run whose result was lost), or paused. The
		// run that ended it may have continued it after a cut-off (a
		// local activity whose workflow task died with its worker is run
		// again, and lands here): the log says how often it was cut off.
		o := w.outcome(ctx, e, in, nil)
		o.Cut = w.cutOffs(ctx, in.SessionID)
		return o, nil
	default:
		return out, permanent(fmt.Errorf("temporal: session %s has %d turns: turn %d cannot run (another turn ran meanwhile)", in.SessionID, turns, in.Turn))
	}
	w.mu.Lock()
	e.running = true
	w.mu.Unlock()
	var end *agent.TurnEnd
	for ev := range events {
		if fw != nil {
			fw.add(ev)
		}
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	w.mu.Lock()
	e.running = false
	w.mu.Unlock()
	if end == nil {
		keep = false
		return out, errors.New("temporal: the turn ended without a TurnEnd")
	}
	if in.Answers != nil && end.Reason == session.ReasonError && isRefusal(end.Err) {
		o := w.outcome(ctx, e, in, end)
		o.Refused = end.Err.Error()
		return o, nil
	}
	if ctx.Err() != nil {
		// Cancelled, or this run lost its lease: the next run, here or
		// elsewhere, opens the session again.
		keep = false
	}
	o := w.outcome(ctx, e, in, end)
	o.Moved, o.Cut = moved, out.Cut
	return o, nil
}

// cutOffs counts the times the log's last turn was cut off (its worker
// died, and another went on from the log): its interrupted ends.
func (w *Worker) cutOffs(ctx context.Context, id string) int {
	tr, err := w.cfg.Store.Load(ctx, id)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.UserMessage:
			if !p.Steer {
				n = 0
			}
		case *session.TurnEnded:
			if p.Reason == session.ReasonInterrupted {
				n++
			}
		}
	}
	return n
}

// turnContext is the context a run's turn runs under. It ends when the
// turn is cancelled (the workflow was cancelled, or this worker stops),
// not when the run merely lost its lease (its heartbeats timed out on a
// loaded machine, say): then the turn runs to its end here, holding the
// session's lock, and the run that replaced this one finds it ended in
// the log. Cancelling it instead would log the turn as cancelled.
func turnContext(ctx context.Context) (context.Context, context.CancelFunc) {
	turnCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		local := activity.IsActivity(ctx) && activity.GetInfo(ctx).IsLocalActivity
		if local || temporal.IsCanceledError(cause) || errors.Is(cause, worker.ErrWorkerShutdown) || !activity.IsActivity(ctx) {
			cancel()
		}
	})
	return turnCtx, func() { stop(); cancel() }
}

// isRefusal reports an answer that did not fit the pause: nothing was
// logged, the turn still waits.
func isRefusal(err error) bool {
	return errors.Is(err, agent.CodeNothingPending) || errors.Is(err, harness.CodeInvalidArguments) || errors.Is(err, agent.CodeCallChanged)
}

// outcome is the run's output from the session's state and, when the
// run ran, its TurnEnd.
func (w *Worker) outcome(ctx context.Context, e *entry, in runInput, end *agent.TurnEnd) runOutput {
	sess := e.sess
	r := TurnResult{SessionID: in.SessionID, Turn: in.Turn, Worker: w.ownQueue}
	if end == nil {
		end = w.loggedEnd(ctx, in.SessionID)
	}
	if end != nil {
		r.Reason, r.Steps, r.Usage, r.Cost, r.Queued = end.Reason, end.Steps, end.Usage, end.Cost, end.Queued
		if end.Err != nil {
			r.Error = &session.ErrorInfo{Code: harness.CodeOf(end.Err), Message: end.Err.Error()}
		}
	}
	msgs := sess.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == harness.RoleAssistant {
			r.Answer = msgs[i].Text()
			break
		}
		if msgs[i].Role == harness.RoleUser && !strings.HasPrefix(msgs[i].Text(), "<system-reminder>") {
			break
		}
	}
	out := runOutput{Result: r}
	if p := sess.Paused(); p != nil {
		out.Pause = p
	} else if e.task != nil && end != nil {
		// A sub-agent's turn ended: its answer for the parent's call.
		a := e.task.Answer(end)
		out.Result.Tool = &a
	}
	return out
}

// loggedEnd reads the last turn's end from the log, for a run whose
// turn had ended already.
func (w *Worker) loggedEnd(ctx context.Context, id string) *agent.TurnEnd {
	tr, err := w.cfg.Store.Load(ctx, id)
	if err != nil {
		return nil
	}
	for i := len(tr.Events) - 1; i >= 0; i-- {
		if te, ok := tr.Events[i].Data.(*session.TurnEnded); ok {
			end := &agent.TurnEnd{Reason: te.Reason, Steps: te.Steps, Usage: te.Usage}
			if te.Error != nil {
				end.Err = &harness.Error{Code: te.Error.Code, Message: te.Error.Message}
			}
			return end
		}
	}
	return nil
}

// deliver steers text into the session's running turn on this worker;
// false when no turn of it runs here.
func (w *Worker) deliver(ctx context.Context, in deliverInput) (bool, error) {
	w.mu.Lock()
	e := w.open[in.SessionID]
	running := e != nil && e.running
	var sess *agent.Session
	if running {
		sess = e.sess
	}
	w.mu.Unlock()
	if sess == nil {
		return false, nil
	}
	d, err := sess.Steer(ctx, in.Text)
	if err != nil {
		return false, nil
	}
	return d == agent.Steered || d == agent.Queued, nil
}

// taskTool is the name of the agent's sub-agent tool, which the worker
// runs as child workflows.
const taskTool = "task"

// acquireTask opens the child session of a sub-agent task on this
// worker; e.mu is held.
func (w *Worker) acquireTask(ctx context.Context, e *entry, id string, task *TaskCall) (*entry, bool, error) {
	tk, err := w.loop.OpenTask(ctx, task.Parent, task.Call)
	if err == nil && tk.Session != nil && tk.Session.Header().ID != id {
		_ = tk.Close()
		err = permanent(fmt.Errorf("temporal: the task turn names session %s, and the task call %s of %s runs in %s", id, task.Call.ID, task.Parent, tk.Session.Header().ID))
	}
	if err != nil {
		e.mu.Unlock()
		w.drop(e)
		if errors.Is(err, harness.CodeInvalidOption) || errors.Is(err, harness.CodeInvalidArguments) || errors.Is(err, harness.CodeNotFound) || errors.Is(err, harness.CodeInvalidID) {
			return nil, false, permanent(err)
		}
		return nil, false, err
	}
	e.task, e.sess = tk, tk.Session
	moved := tk.Session != nil && tk.Session.Turns() > 0
	if moved {
		w.noteMoved(tk.Session)
	}
	return e, moved, nil
}
