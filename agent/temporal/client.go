package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
)

// Client starts turns and talks to them. It needs no session store: the
// workers hold the sessions.
type Client struct {
	c      client.Client
	queue  string
	prefix string
}

// ClientConfig configures a Client; the zero value of each field is its
// default.
type ClientConfig struct {
	// TaskQueue is the queue the workers poll (DefaultTaskQueue when
	// empty).
	TaskQueue string
	// WorkflowPrefix starts the id of every turn workflow ("harness/"
	// when empty): the id is the prefix and the session id, so a session
	// runs one turn at a time.
	WorkflowPrefix string
}

// NewClient returns a client that starts turns through c.
func NewClient(c client.Client, cfg ClientConfig) *Client {
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = DefaultTaskQueue
	}
	if cfg.WorkflowPrefix == "" {
		cfg.WorkflowPrefix = "harness/"
	}
	return &Client{c: c, queue: cfg.TaskQueue, prefix: cfg.WorkflowPrefix}
}

// Turn is a handle on one turn workflow.
type Turn struct {
	c         *Client
	SessionID string
	// WorkflowID and RunID name the workflow run.
	WorkflowID string
	RunID      string
}

// CodeBusy (busy) is the code of Start's error when a turn of the session
// is running or paused: answer it, or cancel it, first.
const CodeBusy harness.Code = "busy"

// Start starts a turn of in.SessionID and returns its handle. The turn
// runs on the worker that ran the session's last turn when it is still
// there (its shells and jobs live on), on any worker otherwise. Starting
// a turn while another of the session runs or waits fails with CodeBusy.
func (c *Client) Start(ctx context.Context, in TurnInput) (*Turn, error) {
	if in.SessionID == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "temporal: TurnInput.SessionID is empty: name the session the turn belongs to"}
	}
	wid := c.prefix + in.SessionID
	if in.Worker == "" {
		in.Worker = c.lastWorker(ctx, wid)
	}
	timeout := in.Timeout
	if timeout <= 0 {
		timeout = 24 * time.Hour
	}
	run, err := c.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       wid,
		TaskQueue:                                c.queue,
		WorkflowExecutionTimeout:                 timeout,
		WorkflowTaskTimeout:                      3 * time.Second,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy:                 enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		// When this process runs a worker on the queue, its first
		// workflow task comes back with the start, not through a poll.
		EnableEagerStart: true,
	}, WorkflowName, in)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, &harness.Error{Code: CodeBusy, Message: fmt.Sprintf("temporal: session %s has a turn running or waiting for an answer; answer or cancel it first", in.SessionID), Err: err}
		}
		return nil, fmt.Errorf("temporal: starting a turn of session %s: %w", in.SessionID, err)
	}
	return &Turn{c: c, SessionID: in.SessionID, WorkflowID: wid, RunID: run.GetRunID()}, nil
}

// lastWorker is the worker that ran the session's last turn, if that
// turn has ended; empty otherwise.
func (c *Client) lastWorker(ctx context.Context, wid string) string {
	d, err := c.c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil || d.WorkflowExecutionInfo == nil || d.WorkflowExecutionInfo.Status != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		return ""
	}
	var r TurnResult
	if err := c.c.GetWorkflow(ctx, wid, d.WorkflowExecutionInfo.Execution.RunId).Get(ctx, &r); err != nil {
		return ""
	}
	return r.Worker
}

// Current returns the handle of the session's latest turn (running,
// paused or ended).
func (c *Client) Current(sessionID string) *Turn {
	return &Turn{c: c, SessionID: sessionID, WorkflowID: c.prefix + sessionID}
}

// Task returns the handle of the sub-agent turn that runs the task call
// callID of the session's current turn: a child workflow of that turn,
// its session agent.TaskSessionID(sessionID, callID). Its Status says
// what it waits for, and Answer answers it (the approvals of a
// sub-agent's calls, say), as for any turn. A paused parent's
// Status.Tasks lists the workflow ids of its running sub-agents; the
// call ids are those of its Pause.Tools.
func (c *Client) Task(sessionID, callID string) *Turn {
	return &Turn{c: c, SessionID: agent.TaskSessionID(sessionID, callID), WorkflowID: TaskWorkflowID(c.prefix+sessionID, callID)}
}

// Wait waits for the turn to end and returns its result. A paused turn
// has not ended: Status says what it waits for.
func (t *Turn) Wait(ctx context.Context) (TurnResult, error) {
	for {
		var r TurnResult
		err := t.c.c.GetWorkflow(ctx, t.WorkflowID, t.RunID).Get(ctx, &r)
		if err == nil || !transient(ctx, err) {
			return r, err
		}
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return r, err
		}
	}
}

// transient reports an error of a call to the server that asking again
// may mend: a connection reset, a query that timed out because the
// worker holding the workflow died. The workflow's own failures, a
// missing workflow and the caller's context are not.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var (
		nf     *serviceerror.NotFound
		inv    *serviceerror.InvalidArgument
		failed *sdktemporal.WorkflowExecutionError
		qr     *serviceerror.QueryFailed
	)
	switch {
	case errors.As(err, &nf), errors.As(err, &inv), errors.As(err, &failed), errors.As(err, &qr):
		return false
	}
	return true
}

// pause waits d, or until ctx is done.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Status returns what the turn is doing.
//
// A query needs a worker to answer it: when the one holding the
// workflow died, Status asks again (for up to a minute) until another
// takes over.
func (t *Turn) Status(ctx context.Context) (Status, error) {
	var s Status
	err := t.query(ctx, QueryStatus, &s)
	return s, err
}

// query runs a query, asking again while its errors are transient, for
// up to a minute.
func (t *Turn) query(ctx context.Context, name string, out any, args ...any) error {
	deadline := time.Now().Add(time.Minute)
	for {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := t.c.c.QueryWorkflow(qctx, t.WorkflowID, t.RunID, name, args...)
		cancel()
		if err == nil {
			return v.Get(out)
		}
		if !transient(ctx, err) || time.Now().After(deadline) {
			return err
		}
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// Answer answers what a paused turn waits for (see agent.Answers), and
// the turn goes on. Answers that do not fit the pause are refused, and
// Status reports why (AnswerError) while the turn still waits.
func (t *Turn) Answer(ctx context.Context, a agent.Answers) error {
	return t.c.c.SignalWorkflow(ctx, t.WorkflowID, t.RunID, SignalAnswer, a)
}

// Steer sends a user message into the running turn: the model reads it
// before its next call (agent.Session.Steer). A message that reaches no
// running turn is returned in TurnResult.Unread.
func (t *Turn) Steer(ctx context.Context, text string) error {
	return t.c.c.SignalWorkflow(ctx, t.WorkflowID, t.RunID, SignalSteer, text)
}

// Cancel cancels the turn: a running turn ends cancelled, as the agent
// loop ends a cancelled turn; a paused turn stops waiting (its log says
// it waits, and the session's next turn answers it as not run).
func (t *Turn) Cancel(ctx context.Context) error {
	return t.c.c.CancelWorkflow(ctx, t.WorkflowID, t.RunID)
}

// Event is one event of a streamed turn: its type, as agent.MarshalEvent
// names it ("text_delta", "tool_call_end", "turn_end", ...), and its JSON
// line.
type Event struct {
	Type string
	JSON json.RawMessage
}

// pollEvery is how often Events asks the workflow for new events.
const pollEvery = 50 * time.Millisecond

// Events yields the events of a turn started with Stream, from the
// first, until it ends (the last is its turn_end) or ctx is done. A
// paused turn yields its approval_request or input_requested and then
// waits, with the turn, for the answer. A worker that died mid-turn may
// have streamed events its successor streams again in their own words.
func (t *Turn) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		next := 0
		for {
			var lines []string
			if err := t.query(ctx, QueryEvents, &lines, next); err != nil {
				yield(Event{}, err)
				return
			}
			for _, l := range lines {
				next++
				ev, err := decodeEvent(l)
				if !yield(ev, err) {
					return
				}
				if ev.Type == "turn_end" {
					var te struct {
						Reason string `json:"reason"`
					}
					if json.Unmarshal(ev.JSON, &te) == nil && !waiting(te.Reason) {
						return
					}
				}
			}
			if len(lines) == 0 {
				st, err := t.Status(ctx)
				if err == nil && st.State == StateEnded && st.Events <= next {
					return
				}
			}
			if err := pause(ctx, pollEvery); err != nil {
				yield(Event{}, err)
				return
			}
		}
	}
}

func waiting(reason string) bool {
	return reason == "awaiting_approval" || reason == "awaiting_input" || reason == "awaiting_budget" || reason == "awaiting_tool"
}
