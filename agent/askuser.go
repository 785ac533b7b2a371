package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// askUserName is the model-facing name of the tool that asks the user.
const askUserName = "ask_user"

// Bounds of one ask_user call.
const (
	maxQuestions = 8
	maxChoices   = 12
)

// askUserArgs are the ask_user tool's arguments.
type askUserArgs struct {
	Questions []harness.Question `json:"questions" jsonschema:"the questions, one or more; each is free text unless it lists choices"`
}

// InputRequest is one ask_user call that waits for the user's answers:
// the model's questions, in order.
type InputRequest struct {
	Call      harness.ToolCall   `json:"call"`
	Questions []harness.Question `json:"questions"`
}

// Answerer answers the questions of one ask_user call while the turn
// waits, for hosts that can ask someone at once (a terminal): one answer
// per question, in order, each free text or the label of a choice
// (several labels joined by ", "). An error is the call's result (the
// model reads it); a cancelled ctx ends the turn. See WithAskUser.
type Answerer func(ctx context.Context, req InputRequest) ([]string, error)

// WithAskUser gives the model the ask_user tool: it asks the user one or
// more questions, each free text or a pick among choices, and reads the
// answers as the call's result. With an answerer the questions are
// answered while the turn waits. Without one (nil) the turn pauses
// durably after the step's other calls: an InputRequested event, a
// TurnEnd with reason awaiting_input, the questions in the log
// (Session.Paused lists them, after ResumeSession too), and
// Session.Answer with Answers.Input continues the same turn. A sub-agent
// cannot pause its parent's turn: without an answerer its ask_user
// calls fail with a result telling it to decide itself. The call's
// render intent is harness.RenderQuestions: the questions with their
// choices, and once answered the answers.
func WithAskUser(a Answerer) Option {
	return func(c *config) {
		c.askUser = true
		c.answerer = a
	}
}

// askUserTool builds the ask_user tool of a loop.
func (l *Loop) askUserTool() tools.Tool {
	spec := tools.Spec{
		Name: askUserName,
		Description: "Ask the user one or more questions and wait for the answers. Use it when you need a decision or a fact only the user has " +
			"(a preference between approaches, an ambiguous requirement, a missing credential name), not for things you can find out yourself. " +
			"Give choices when the answer is one of a few options (the user may still answer otherwise); set multiple when several may be picked. " +
			"Ask everything you need in one call.",
		Render: harness.RenderQuestions,
	}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in askUserArgs) (*harness.ToolResult, error) {
		if err := checkQuestions(in.Questions); err != nil {
			return nil, err
		}
		if l.cfg.answerer == nil {
			return nil, &harness.Error{Code: harness.CodeNotRun, Message: "no one can answer questions here (a sub-agent cannot ask the user): decide yourself, and say in your answer what you assumed"}
		}
		req := InputRequest{Call: harness.ToolCall{ID: call.ID, Name: call.Name, Arguments: call.Arguments}, Questions: in.Questions}
		answers, err := askAnswerer(ctx, l.cfg.answerer, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &harness.Error{Code: harness.CodeToolFailed, Message: "the user could not be asked: " + err.Error()}
		}
		if len(answers) != len(in.Questions) {
			return nil, &harness.Error{Code: harness.CodeToolFailed, Message: fmt.Sprintf("the host gave %d answers to %d questions", len(answers), len(in.Questions))}
		}
		return answersResult(in.Questions, answers), nil
	})
}

// askAnswerer asks a, recovering a panic as an error.
func askAnswerer(ctx context.Context, a Answerer, req InputRequest) (out []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the answerer panicked: %v", p)
		}
	}()
	return a(ctx, req)
}

// checkQuestions reports what is wrong with the questions of a call.
func checkQuestions(qs []harness.Question) error {
	bad := func(format string, args ...any) error {
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf(format, args...)}
	}
	if len(qs) == 0 {
		return bad("questions is empty: ask at least one question")
	}
	if len(qs) > maxQuestions {
		return bad("%d questions at once is too many (at most %d): ask what matters most", len(qs), maxQuestions)
	}
	for i, q := range qs {
		if strings.TrimSpace(q.Question) == "" {
			return bad("question %d is empty", i+1)
		}
		if len(q.Choices) > maxChoices {
			return bad("question %d has %d choices (at most %d)", i+1, len(q.Choices), maxChoices)
		}
		if len(q.Choices) == 1 {
			return bad("question %d has one choice: give two or more, or none for a free-text answer", i+1)
		}
		if q.Multiple && len(q.Choices) == 0 {
			return bad("question %d sets multiple but has no choices", i+1)
		}
		seen := map[string]bool{}
		for _, c := range q.Choices {
			if strings.TrimSpace(c) == "" {
				return bad("question %d has an empty choice", i+1)
			}
			if seen[c] {
				return bad("question %d has the choice %q twice", i+1, c)
			}
			seen[c] = true
		}
	}
	return nil
}

// answersResult is what the model reads for answered questions.
func answersResult(qs []harness.Question, answers []string) *harness.ToolResult {
	var b strings.Builder
	b.WriteString("The user answered:")
	for i, q := range qs {
		a := strings.TrimSpace(answers[i])
		if a == "" {
			a = "(no answer)"
		}
		fmt.Fprintf(&b, "\n%d. %s\n   %s", i+1, q.Question, a)
	}
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(b.String())},
		Render:  &harness.Render{Kind: harness.RenderQuestions, Title: "Asked the user", Questions: qs, Answers: answers},
	}
}

// deferInput reports whether the call is an ask_user call the turn must
// pause for: the loop has the tool and no answerer, and it is not a
// sub-agent's.
func (t *turn) deferInput(c *tools.Call) bool {
	cfg := &t.l.cfg
	return cfg.askUser && cfg.answerer == nil && cfg.depth == 0 && c.Name == askUserName
}

// questionsOf decodes the questions of an ask_user call as logged.
func questionsOf(c harness.ToolCall) ([]harness.Question, error) {
	var in askUserArgs
	if err := json.Unmarshal([]byte(c.Arguments), &in); err != nil {
		return nil, err
	}
	return in.Questions, checkQuestions(in.Questions)
}

// pauseInput ends a step whose ask_user calls wait for the user: it
// logs the pause, keeps it, yields InputRequested and returns errPaused.
func (t *turn) pauseInput(step int, waiting []harness.ToolCall) error {
	ids := make([]string, len(waiting))
	reqs := make([]InputRequest, len(waiting))
	for i, c := range waiting {
		ids[i] = c.ID
		qs, _ := questionsOf(c) // checked before
		reqs[i] = InputRequest{Call: c, Questions: qs}
	}
	if err := t.pauseForCalls(step, session.ReasonAwaitingInput, ids); err != nil {
		return fmt.Errorf("agent: logging the questions' pause: %w", err)
	}
	t.emit(&InputRequested{Step: step, Requests: reqs})
	return errPaused
}

// inputRequests returns the waiting ask_user calls of ids, in order.
func (s *Session) inputRequests(ids []string) []InputRequest {
	pending := s.pendingCalls()
	out := make([]InputRequest, 0, len(ids))
	for _, id := range ids {
		c, ok := pending[id]
		if !ok {
			continue
		}
		qs, _ := questionsOf(c)
		out = append(out, InputRequest{Call: c, Questions: qs})
	}
	return out
}

// resumeInput continues a turn whose ask_user calls waited, with the
// user's answers by call id.
func (t *turn) resumeInput(pz *pause, in map[string][]string) {
	reqs := t.s.inputRequests(pz.inputs)
	if err := checkInput(pz, reqs, in); err != nil {
		t.end(&TurnEnd{Reason: session.ReasonError, Err: err})
		return
	}
	t.s.mu.Lock()
	t.s.paused = nil
	t.s.mu.Unlock()
	t.steps, t.output = pz.step, pz.output
	for _, r := range reqs {
		if err := t.s.append(t.ctx, &session.ToolStarted{Step: pz.step, CallID: r.Call.ID, Name: r.Call.Name}); err != nil {
			t.finish(session.ReasonError, fmt.Errorf("agent: logging an answered question: %w", err))
			return
		}
		t.emit(&ToolCallStart{Step: pz.step, Call: r.Call, Render: harness.RenderQuestions})
		if err := t.finishCall(pz.step, r.Call, answersResult(r.Questions, in[r.Call.ID]), time.Duration(0)); err != nil {
			t.finish(session.ReasonError, err)
			return
		}
	}
	t.emit(&StepEnd{Step: pz.step, Finish: "tool_calls", ToolCalls: len(reqs)})
	t.loop()
}

// checkInput reports answers that do not fit the waiting questions.
func checkInput(pz *pause, reqs []InputRequest, in map[string][]string) error {
	if len(reqs) != len(pz.inputs) {
		return &harness.Error{Code: CodeNothingPending, Message: "agent: the questions asked are no longer waiting in the session's log; nothing was answered: read Paused again"}
	}
	waiting := make([]string, len(reqs))
	for i, r := range reqs {
		waiting[i] = r.Call.ID
	}
	unknown, missing := answerIDs(waiting, in)
	switch {
	case len(unknown) > 0:
		return &harness.Error{Code: CodeNothingPending, Message: fmt.Sprintf("agent: no question waits under the call id %s; the waiting calls are %s", strings.Join(unknown, ", "), strings.Join(pz.inputs, ", "))}
	case len(missing) > 0:
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("agent: the questions of %s still wait: answer every waiting call (%s) at once", strings.Join(missing, ", "), strings.Join(pz.inputs, ", "))}
	}
	for _, r := range reqs {
		if got := len(in[r.Call.ID]); got != len(r.Questions) {
			return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("agent: the call %s asked %d questions and the answers give %d: one answer per question, in order", r.Call.ID, len(r.Questions), got)}
		}
	}
	return nil
}
