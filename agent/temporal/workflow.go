package temporal

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/session"
)

// The names the workflow, its activities, signals and queries are
// registered under. They are part of the wire protocol between clients
// and workers: stable once shipped.
const (
	// WorkflowName is the turn workflow.
	WorkflowName = "harness.Turn"
	// SignalAnswer carries an agent.Answers to a paused turn.
	SignalAnswer = "harness.answer"
	// SignalSteer carries a user message into the running turn.
	SignalSteer = "harness.steer"
	// QueryStatus returns a Status.
	QueryStatus = "harness.status"
	// QueryEvents returns the turn's streamed events from an index on.
	QueryEvents = "harness.events"

	signalEvents = "harness.events"
	actPrepare   = "harness.Prepare"
	actRun       = "harness.RunTurn"
	actDeliver   = "harness.Deliver"

	// DefaultTaskQueue is the task queue of workers and clients that name
	// none.
	DefaultTaskQueue = "harness-turns"
)

// TurnInput starts one turn of a session.
type TurnInput struct {
	// SessionID names the session.
	SessionID string `json:"session_id"`
	// Create, when set, is the header of the session to create when it
	// does not exist yet (its ID is SessionID).
	Create *session.Header `json:"create,omitempty"`
	// Prompt is the user's message.
	Prompt string `json:"prompt"`
	// Stream sends the turn's events to the workflow, where Turn.Events
	// reads them. Without it only the result, the status and pauses are
	// known to clients, and the turn costs no extra round trips.
	Stream bool `json:"stream,omitempty"`
	// Worker is the task queue of the worker that ran the session's
	// previous turn, where the session may still be open: the turn goes
	// there first. Client.Start fills it in.
	Worker string `json:"worker,omitempty"`
	// Timeout bounds the whole turn, pauses included (24 hours when zero).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Task, when set, makes the turn a sub-agent's: the one turn of the
	// child session (SessionID, agent.TaskSessionID of the parent and the
	// call) that runs the parent's task call, as a child workflow of the
	// parent's turn. The prompt is the call's. The workflow sets it.
	Task *TaskCall `json:"task,omitempty"`
}

// TaskCall is a parent session's task call that a child workflow runs.
type TaskCall struct {
	// Parent is the parent session's id.
	Parent string `json:"parent"`
	// Call is the task call as the parent's model made it.
	Call harness.ToolCall `json:"call"`
}

// TurnResult is how a turn ended.
type TurnResult struct {
	SessionID string `json:"session_id"`
	// Turn is the turn's number in the session, from 1.
	Turn int `json:"turn"`
	// Reason is the session.Reason* the turn ended with (completed,
	// step_limit, cancelled, error).
	Reason string        `json:"reason"`
	Steps  int           `json:"steps"`
	Usage  harness.Usage `json:"usage"`
	Cost   float64       `json:"cost,omitempty"`
	// Answer is the text of the model's last answer.
	Answer string `json:"answer,omitempty"`
	// Error says why a turn ended with reason error.
	Error *session.ErrorInfo `json:"error,omitempty"`
	// Worker is the task queue of the worker that ran the turn's end.
	Worker string `json:"worker,omitempty"`
	// Moves counts the times the turn went on on another worker than the
	// one it was running on (that worker died, or stopped answering).
	Moves int `json:"moves,omitempty"`
	// Queued is how many messages the session holds as its next turns
	// on the worker (steered as the turn ended); Unread are steered
	// messages that reached no running turn. Send them as the next turn.
	Queued int      `json:"queued,omitempty"`
	Unread []string `json:"unread,omitempty"`
	// Tool is, for a sub-agent's turn (TurnInput.Task), the result it
	// gives the parent's task call, with what the sub-agent spent.
	Tool *agent.ToolAnswer `json:"tool,omitempty"`
}

// Status is what a turn workflow is doing, as QueryStatus returns it.
type Status struct {
	// State is running, paused or ended.
	State string `json:"state"`
	Turn  int    `json:"turn"`
	// Pause is what a paused turn waits for.
	Pause *agent.Pause `json:"pause,omitempty"`
	// AnswerError says why the last answer was refused (it did not fit
	// the pause); the turn still waits.
	AnswerError string `json:"answer_error,omitempty"`
	// Events is how many events were streamed so far.
	Events int `json:"events"`
	// Tasks are the workflow ids of the sub-agents (child workflows) a
	// turn paused awaiting_tool runs: Client.Task returns their handles,
	// whose Status shows what each waits for (an approval, say).
	Tasks []string `json:"tasks,omitempty"`
	// Result is the turn's result once it ended.
	Result *TurnResult `json:"result,omitempty"`
}

// The states of Status.State.
const (
	StateRunning = "running"
	StatePaused  = "paused"
	StateEnded   = "ended"
)

// prepared is what the first local activity finds: the turn's number
// and the worker queue that runs it.
type prepared struct {
	Turns  int    `json:"turns"`
	Worker string `json:"worker"`
}

// prepareInput names the session a turn opens.
type prepareInput struct {
	SessionID string          `json:"session_id"`
	Create    *session.Header `json:"create,omitempty"`
	Task      *TaskCall       `json:"task,omitempty"`
}

// runInput is one run of the turn on a worker: its start, its answer
// after a pause, or its continuation after a worker died.
type runInput struct {
	SessionID  string          `json:"session_id"`
	Create     *session.Header `json:"create,omitempty"`
	Task       *TaskCall       `json:"task,omitempty"`
	Turn       int             `json:"turn"`
	Prompt     string          `json:"prompt"`
	Answers    *agent.Answers  `json:"answers,omitempty"`
	Stream     bool            `json:"stream,omitempty"`
	WorkflowID string          `json:"workflow_id"`
	RunID      string          `json:"run_id"`
	// Sent is how many events the workflow holds already.
	Sent int `json:"sent"`
}

// runOutput is how a run ended.
type runOutput struct {
	Result TurnResult   `json:"result"`
	Pause  *agent.Pause `json:"pause,omitempty"`
	// Refused says the answers did not fit the pause: nothing was logged.
	Refused string `json:"refused,omitempty"`
	// Moved says the run found the session closed on this worker, so the
	// state of its tools (shells, jobs) did not come with it.
	Moved bool `json:"moved,omitempty"`
	// Cut is, for a run that continued a turn cut off, how many times
	// the log says the turn was cut off so far.
	Cut int `json:"cut,omitempty"`
}

// eventBatch is a batch of streamed events (agent.MarshalEvent lines).
type eventBatch struct {
	// From is the index of the first event in the turn's stream, so a
	// batch sent twice is kept once.
	From   int      `json:"from"`
	Events []string `json:"events"`
}

func (w *Worker) turnWorkflow(ctx workflow.Context, in TurnInput) (TurnResult, error) {
	info := workflow.GetInfo(ctx)
	st := &Status{State: StateRunning}
	var events []string
	var answers []agent.Answers
	var steers []string
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) {
		s := *st
		s.Events = len(events)
		return s, nil
	}); err != nil {
		return TurnResult{}, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func(from int) ([]string, error) {
		if from < 0 || from > len(events) {
			from = len(events)
		}
		return events[from:], nil
	}); err != nil {
		return TurnResult{}, err
	}
	evCh := workflow.GetSignalChannel(ctx, signalEvents)
	ansCh := workflow.GetSignalChannel(ctx, SignalAnswer)
	steerCh := workflow.GetSignalChannel(ctx, SignalSteer)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var b eventBatch
			if !evCh.Receive(ctx, &b) {
				return
			}
			// Keep each event once: a batch a retried send repeats
			// overlaps what is held.
			if b.From <= len(events) && b.From+len(b.Events) > len(events) {
				events = append(events, b.Events[len(events)-b.From:]...)
			}
		}
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var a agent.Answers
			if !ansCh.Receive(ctx, &a) {
				return
			}
			answers = append(answers, a)
		}
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var s string
			if !steerCh.Receive(ctx, &s) {
				return
			}
			steers = append(steers, s)
		}
	})

	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumInterval: 2 * time.Second},
	})
	// The session is opened (or created) on a worker that then runs the
	// turn: the one the client names, where the session may be open
	// still, or this one.
	var prep prepared
	pin := prepareInput{SessionID: in.SessionID, Create: in.Create, Task: in.Task}
	err := errors.New("no worker named")
	local := false // the session was opened by this workflow task's worker
	if in.Worker != "" {
		hctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue: in.Worker, ScheduleToStartTimeout: 2 * time.Second, StartToCloseTimeout: 30 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		err = workflow.ExecuteActivity(hctx, actPrepare, pin).Get(ctx, &prep)
	}
	if err != nil {
		if err := workflow.ExecuteLocalActivity(lctx, actPrepare, pin).Get(ctx, &prep); err != nil {
			return TurnResult{}, fmt.Errorf("preparing the turn of session %s: %w", in.SessionID, err)
		}
		local = true
	}
	st.Turn = prep.Turns + 1
	run := runInput{SessionID: in.SessionID, Create: in.Create, Task: in.Task, Turn: st.Turn, Prompt: in.Prompt, Stream: in.Stream,
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID}

	// The worker for the next run: the hint first, then the one that
	// runs this workflow task.
	queue := prep.Worker
	pick := func() string {
		var q string
		_ = workflow.SideEffect(ctx, func(workflow.Context) any { return w.ownQueue }).Get(&q)
		return q
	}
	// moves counts the turn's moves to another worker: the times it was
	// cut off (from the log, as the runs that continued it read it, so
	// a local run replayed after its worker died counts too) and the
	// answers to a pause run on another worker than the one that paused.
	moves, cut, answered, failures := 0, 0, 0, 0
	var paused string  // the worker whose run ended in the last pause
	durable := false   // the turn's number is in the history: a run ended
	var current string // the worker running the turn, for steers
	// Steers go to the worker running the turn; those that found no
	// running turn there are tried again.
	deliverCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToStartTimeout: 2 * time.Second, StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			if err := workflow.Await(ctx, func() bool { return len(steers) > 0 && current != "" }); err != nil {
				return
			}
			text, to := steers[0], current
			var ok bool
			err := workflow.ExecuteActivity(workflow.WithTaskQueue(deliverCtx, to), actDeliver, deliverInput{SessionID: in.SessionID, Text: text}).Get(ctx, &ok)
			if err == nil && ok {
				steers = steers[1:]
				continue
			}
			if err := workflow.Sleep(ctx, 200*time.Millisecond); err != nil {
				return
			}
		}
	})

	for {
		run.Sent = len(events)
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:              queue,
			ScheduleToStartTimeout: 3 * time.Second,
			StartToCloseTimeout:    24 * time.Hour,
			HeartbeatTimeout:       2 * time.Second,
			WaitForCancellation:    true,
			RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		current = queue
		var out runOutput
		var err error
		if local && durable && !in.Stream && run.Answers == nil {
			// After a worker died, the run goes on in this workflow
			// task, as a local activity on the worker that runs it: no
			// hand-off through the server. Only then: the turn's number
			// must be in the history before a run can log the prompt (a
			// workflow task that dies with its worker is replayed, and a
			// Prepare replayed after the prompt was logged would count
			// it). A turn that streams runs as an activity, so that its
			// events and steers are not held until the task's next
			// heartbeat.
			rctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
				StartToCloseTimeout: 24 * time.Hour,
				RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
			})
			err = workflow.ExecuteLocalActivity(rctx, actRun, run).Get(ctx, &out)
		} else {
			err = workflow.ExecuteActivity(actx, actRun, run).Get(ctx, &out)
		}
		current = ""
		if err != nil {
			if temporal.IsCanceledError(err) || ctx.Err() != nil {
				res := TurnResult{SessionID: in.SessionID, Turn: st.Turn, Reason: session.ReasonCancelled, Moves: moves}
				st.State, st.Result = StateEnded, &res
				return res, nil
			}
			var appErr *temporal.ApplicationError
			if errors.As(err, &appErr) && appErr.NonRetryable() {
				return TurnResult{}, err
			}
			durable = true
			// The worker died or refused (the session is open elsewhere):
			// the turn goes on, from the log, on the worker that runs this
			// workflow now.
			failures++
			if failures > 1 {
				d := min(time.Duration(failures)*200*time.Millisecond, 5*time.Second)
				if err := workflow.Sleep(ctx, d); err != nil {
					return TurnResult{}, err
				}
			}
			queue, local = pick(), true
			continue
		}
		failures = 0
		cut = max(cut, out.Cut)
		if run.Answers != nil && paused != "" && out.Result.Worker != paused {
			answered++
		}
		paused = out.Result.Worker
		moves = cut + answered
		run.Answers = nil
		out.Result.Moves = moves
		if out.Refused != "" {
			st.AnswerError = out.Refused
		}
		if out.Pause != nil && out.Pause.Reason == session.ReasonAwaitingTool {
			// Sub-agents: one child workflow per task call, durable on
			// their own; their results answer the calls, on the worker
			// that paused, where the session stays open.
			st.State, st.Pause = StatePaused, out.Pause
			a, err := w.runTasks(ctx, in, out.Pause.Tools, st)
			if err != nil {
				res := TurnResult{SessionID: in.SessionID, Turn: st.Turn, Reason: session.ReasonCancelled, Moves: moves}
				st.State, st.Result = StateEnded, &res
				return res, nil
			}
			run.Answers = &a
			local = false
			st.State, st.Pause, st.AnswerError, st.Tasks = StateRunning, nil, "", nil
			continue
		}
		if out.Pause != nil {
			st.State, st.Pause = StatePaused, out.Pause
			if err := workflow.Await(ctx, func() bool { return len(answers) > 0 }); err != nil {
				res := TurnResult{SessionID: in.SessionID, Turn: st.Turn, Reason: session.ReasonCancelled, Moves: moves}
				st.State, st.Result = StateEnded, &res
				return res, nil
			}
			a := answers[0]
			answers = answers[1:]
			run.Answers = &a
			// The worker that paused keeps the session open: it answers
			// first, as an activity on its queue.
			local = false
			st.State, st.Pause, st.AnswerError = StateRunning, nil, ""
			continue
		}
		res := out.Result
		res.Unread = append(res.Unread, steers...)
		st.State, st.Result = StateEnded, &res
		return res, nil
	}
}

type deliverInput struct {
	SessionID string `json:"session_id"`
	Text      string `json:"text"`
}

// TaskWorkflowID is the id of the child workflow that runs the task call
// callID of the turn workflow parentWorkflowID: derived from both, so a
// workflow replayed or retried attaches to its child rather than
// starting another.
func TaskWorkflowID(parentWorkflowID, callID string) string {
	return parentWorkflowID + "/task/" + callID
}

// runTasks runs the task calls of a turn paused awaiting_tool as child
// workflows, at once, and returns the answers to resume the turn with.
// A call of another external tool, or a child workflow that failed, is
// answered with an error result. It fails only when the turn is
// cancelled.
func (w *Worker) runTasks(ctx workflow.Context, in TurnInput, calls []harness.ToolCall, st *Status) (agent.Answers, error) {
	info := workflow.GetInfo(ctx)
	timeout := in.Timeout
	if timeout <= 0 {
		timeout = 24 * time.Hour
	}
	futures := make([]workflow.ChildWorkflowFuture, len(calls))
	st.Tasks = nil
	for i, c := range calls {
		if c.Name != taskTool {
			continue
		}
		wid := TaskWorkflowID(info.WorkflowExecution.ID, c.ID)
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:               wid,
			TaskQueue:                w.queue,
			WorkflowExecutionTimeout: timeout,
			WorkflowTaskTimeout:      3 * time.Second,
			WaitForCancellation:      true,
		})
		child := TurnInput{SessionID: agent.TaskSessionID(in.SessionID, c.ID), Task: &TaskCall{Parent: in.SessionID, Call: c}, Stream: in.Stream, Timeout: timeout}
		futures[i] = workflow.ExecuteChildWorkflow(cctx, WorkflowName, child)
		st.Tasks = append(st.Tasks, wid)
	}
	a := agent.Answers{Tools: map[string]agent.ToolAnswer{}}
	for i, c := range calls {
		if futures[i] == nil {
			a.Tools[c.ID] = agent.ToolAnswer{Result: *harness.ErrorResult(harness.CodeNotRun,
				"The %s tool cannot run here: this worker runs only sub-agents (task) outside the turn. Nothing was changed by it.", c.Name)}
			continue
		}
		var res TurnResult
		err := futures[i].Get(ctx, &res)
		if ctx.Err() != nil {
			return agent.Answers{}, ctx.Err()
		}
		switch {
		case err != nil:
			a.Tools[c.ID] = agent.ToolAnswer{Result: *harness.ErrorResult(harness.CodeToolFailed,
				"The sub-agent's workflow (%s) failed: %v. Its session may hold partial work.", TaskWorkflowID(info.WorkflowExecution.ID, c.ID), err)}
		case res.Tool == nil:
			msg := "it ended " + res.Reason
			if res.Error != nil {
				msg += ": " + res.Error.Message
			}
			a.Tools[c.ID] = agent.ToolAnswer{Result: *harness.ErrorResult(harness.CodeToolFailed,
				"The sub-agent (session %s) gave no answer: %s.", res.SessionID, msg), Usage: res.Usage, Cost: res.Cost}
		default:
			a.Tools[c.ID] = *res.Tool
		}
	}
	return a, nil
}
