package turns

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// The names the workflow and its activities are registered under.
const (
	WorkflowName   = "harness.Turn"
	ActAppendUser  = "harness.AppendUser"
	ActModelStep   = "harness.ModelStep"
	ActToolCall    = "harness.ToolCall"
	ActEndTurn     = "harness.EndTurn"
	defaultMaxStep = 32
)

// TurnInput starts one turn of a session.
type TurnInput struct {
	// SessionID names the session; the first turn creates it.
	SessionID string
	// Turn is the 1-based number of this turn in the session: the log's
	// Turn-th user message is this turn's. It is what makes appending the
	// prompt idempotent, so a session's turns must run one at a time.
	Turn int
	// Prompt is the user message.
	Prompt string
	// MaxSteps bounds the model calls of the turn (32 when zero).
	MaxSteps int
}

// TurnResult is what a completed turn workflow returns.
type TurnResult struct {
	// Reason is the logged end reason (session.ReasonCompleted, ...).
	Reason string
	// Steps is the number of model calls.
	Steps int
	// Answer is the text of the model's last answer.
	Answer string
	// Calls lists the turn's tool calls in order.
	Calls []CallResult
}

// StepInput names one model call of a turn.
type StepInput struct {
	SessionID string
	Turn      int
	Step      int
}

// StepResult is the model's logged answer for one step.
type StepResult struct {
	Text   string
	Finish string
	Calls  []harness.ToolCall
}

// CallInput names one tool call of a step.
type CallInput struct {
	SessionID string
	Turn      int
	Step      int
	Index     int
	Call      harness.ToolCall
}

// CallResult says how a tool call ended, as logged.
type CallResult struct {
	CallID  string
	Name    string
	IsError bool
	Code    harness.Code
	// Ran reports that this attempt of the activity ran the tool; false
	// when the result came from the log (a retry after the call ended, or
	// an outcome-unknown result for a call whose start was logged).
	Ran bool
}

// EndInput ends a turn in the log.
type EndInput struct {
	SessionID string
	Turn      int
	Reason    string
	Steps     int
}

// ActivityOptions are the options the workflow runs its activities
// with: a short heartbeat timeout, so that an activity on a worker that
// died is retried on another within seconds, and retries without a
// limit of attempts for failures that may pass (a locked session, a lost
// connection, a model that is rate-limited); the workflow's own timeout
// bounds them. Errors that cannot pass are non-retryable.
func ActivityOptions(startToClose time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: startToClose,
		HeartbeatTimeout:    2 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    100 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Second,
		},
	}
}

// Turn is the workflow of one turn: the prompt is appended to the log,
// then each model call and each tool call is an activity, until the
// model answers without calling tools. Every activity reads the session
// log from the store first and does only what the log says is not done,
// so a retry on another worker continues the turn where the log stops.
func Turn(ctx workflow.Context, in TurnInput) (TurnResult, error) {
	maxSteps := in.MaxSteps
	if maxSteps <= 0 {
		maxSteps = defaultMaxStep
	}
	short := workflow.WithActivityOptions(ctx, ActivityOptions(30*time.Second))
	toolCtx := workflow.WithActivityOptions(ctx, ActivityOptions(10*time.Minute))
	if err := workflow.ExecuteActivity(short, ActAppendUser, in).Get(ctx, nil); err != nil {
		return TurnResult{}, fmt.Errorf("appending the prompt: %w", err)
	}
	res := TurnResult{Reason: session.ReasonStepLimit}
	for step := 1; step <= maxSteps; step++ {
		var sr StepResult
		if err := workflow.ExecuteActivity(short, ActModelStep, StepInput{SessionID: in.SessionID, Turn: in.Turn, Step: step}).Get(ctx, &sr); err != nil {
			return res, fmt.Errorf("step %d: calling the model: %w", step, err)
		}
		res.Steps = step
		res.Answer = sr.Text
		if len(sr.Calls) == 0 {
			res.Reason = session.ReasonCompleted
			break
		}
		// One call at a time: each activity holds the session's single
		// writer lock while it runs.
		for i, c := range sr.Calls {
			var cr CallResult
			if err := workflow.ExecuteActivity(toolCtx, ActToolCall, CallInput{SessionID: in.SessionID, Turn: in.Turn, Step: step, Index: i, Call: c}).Get(ctx, &cr); err != nil {
				return res, fmt.Errorf("step %d: the %s call %s: %w", step, c.Name, c.ID, err)
			}
			res.Calls = append(res.Calls, cr)
		}
	}
	end := EndInput{SessionID: in.SessionID, Turn: in.Turn, Reason: res.Reason, Steps: res.Steps}
	if err := workflow.ExecuteActivity(short, ActEndTurn, end).Get(ctx, nil); err != nil {
		return res, fmt.Errorf("logging the end of the turn: %w", err)
	}
	return res, nil
}

// DefaultTaskQueue is the task queue the example's worker and starter
// use unless told otherwise.
const DefaultTaskQueue = "harness-turns"

// WorkerOptions are the worker options the example uses: a workflow
// cached on a worker that died is handed to another after a second
// instead of the default five.
func WorkerOptions() worker.Options {
	return worker.Options{StickyScheduleToStartTimeout: time.Second}
}

// StartOptions are the options to start the turn workflow with: its id
// names the session and the turn, so starting the same turn twice joins
// the run that exists; a workflow task lost with its worker is retried
// after a few seconds.
func StartOptions(queue string, in TurnInput, timeout time.Duration) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       fmt.Sprintf("%s/turn-%d", in.SessionID, in.Turn),
		TaskQueue:                queue,
		WorkflowExecutionTimeout: timeout,
		WorkflowTaskTimeout:      3 * time.Second,
	}
}
