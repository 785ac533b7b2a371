package session_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

func ev(seq int64, p session.Payload) session.Event { return session.Event{Seq: seq, Data: p} }

func callBlock(id, name string) harness.Block {
	return harness.Block{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id, Name: name, Arguments: "{}"}}
}

func TestHistoryOrdersResultsByCall(t *testing.T) {
	h := new(session.History).Add([]session.Event{
		ev(1, user("go")),
		ev(2, &session.AssistantMessage{Step: 1, Content: []harness.Block{callBlock("a", "read"), callBlock("b", "read")}}),
		ev(3, &session.ToolStarted{CallID: "a"}), ev(4, &session.ToolStarted{CallID: "b"}),
		ev(5, &session.ToolFinished{CallID: "b", Result: *harness.TextResult("B")}),
		ev(6, &session.ToolFinished{CallID: "a", Result: *harness.TextResult("A")}),
		ev(7, &session.Reminded{Reminder: harness.Reminder{Source: "g", Text: "careful"}}),
		ev(8, &session.AssistantMessage{Step: 2, Content: []harness.Block{harness.TextBlock("done")}}),
		ev(9, &session.TurnEnded{Reason: session.ReasonCompleted}),
	}...)
	msgs := h.Messages()
	require.Len(t, msgs, 6)
	assert.Equal(t, "a", msgs[2].Content[0].ToolResult.CallID)
	assert.Equal(t, "A", msgs[2].Content[0].ToolResult.Content[0].Text, "results in call order, not finish order")
	assert.Equal(t, "B", msgs[3].Content[0].ToolResult.Content[0].Text)
	assert.Contains(t, msgs[4].Text(), "careful")
	assert.Equal(t, harness.RoleUser, msgs[4].Role)
	assert.False(t, h.Interrupted())
	assert.Equal(t, 1, h.Turns())
}

func TestCrashRepair(t *testing.T) {
	events := []session.Event{
		ev(1, user("go")),
		ev(2, &session.AssistantMessage{Step: 1, Content: []harness.Block{callBlock("done", "edit"), callBlock("running", "bash"), callBlock("queued", "bash")}}),
		ev(3, &session.ToolStarted{CallID: "done"}),
		ev(4, &session.ToolFinished{CallID: "done", Result: *harness.TextResult("edited")}),
		ev(5, &session.ToolStarted{CallID: "running"}),
		// crash: "running" never finished, "queued" never started.
	}
	h := new(session.History).Add(events...)
	assert.True(t, h.Interrupted())
	msgs := h.Messages()
	require.Len(t, msgs, 5)
	assert.Equal(t, "edited", msgs[2].Content[0].ToolResult.Content[0].Text, "completed work is kept")
	r := msgs[3].Content[0].ToolResult
	assert.Equal(t, harness.CodeOutcomeUnknown, r.Code)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, "outcome of this bash call is unknown")
	assert.Contains(t, r.Content[0].Text, "Verify its side effects")
	q := msgs[4].Content[0].ToolResult
	assert.Equal(t, harness.CodeNotRun, q.Code)
	assert.Contains(t, q.Content[0].Text, "was not run")
	assert.Len(t, h.Pending(), 2)

	// The next user message closes the slots for good.
	h.Add(ev(6, &session.TurnEnded{Reason: session.ReasonInterrupted}))
	h.Add(ev(7, user("continue")))
	msgs2 := h.Messages()
	assert.Equal(t, harness.CodeOutcomeUnknown, msgs2[3].Content[0].ToolResult.Code)
	assert.Empty(t, h.Pending())
	assert.Equal(t, 2, h.Turns())
}

func TestHistoryCopiesAreStable(t *testing.T) {
	h := new(session.History).Add([]session.Event{
		ev(1, user("go")),
		ev(2, &session.AssistantMessage{Content: []harness.Block{callBlock("a", "x")}}),
	}...)
	before := h.Messages()
	h.Add(ev(3, &session.ToolFinished{CallID: "a", Result: *harness.TextResult("real")}))
	assert.Equal(t, harness.CodeNotRun, before[2].Content[0].ToolResult.Code, "an earlier copy does not change")
	assert.Equal(t, "real", h.Messages()[2].Content[0].ToolResult.Content[0].Text)
}

// A turn that stopped mid-way is closed with the steps and usage its
// events hold, and the warnings name every call whose result was made up.
func TestRepairNamesWhatItRepaired(t *testing.T) {
	usage := &harness.Usage{InputTokens: 100, OutputTokens: 20}
	for _, tc := range []struct {
		name     string
		events   []session.Event
		end      *session.TurnEnded
		warnings []string
	}{
		{
			name: "ended",
			events: []session.Event{ev(1, user("go")), ev(2, &session.AssistantMessage{Step: 1, Usage: usage}),
				ev(3, &session.TurnEnded{Reason: session.ReasonCompleted, Steps: 1})},
		},
		{
			name: "killed while a call ran",
			events: []session.Event{
				ev(1, user("earlier")), ev(2, &session.AssistantMessage{Step: 1, Usage: usage}), ev(3, &session.TurnEnded{Reason: session.ReasonCompleted, Steps: 1}),
				ev(4, user("go")),
				ev(5, &session.ModelRequest{Step: 1}),
				ev(6, &session.AssistantMessage{Step: 1, Usage: usage, Content: []harness.Block{callBlock("a", "read")}}),
				ev(7, &session.ToolStarted{Step: 1, CallID: "a"}), ev(8, &session.ToolFinished{Step: 1, CallID: "a", Result: *harness.TextResult("A")}),
				ev(9, &session.ModelRequest{Step: 2}),
				ev(10, &session.AssistantMessage{Step: 2, Usage: &harness.Usage{InputTokens: 150, OutputTokens: 30}, Content: []harness.Block{callBlock("b", "bash"), callBlock("c", "write")}}),
				ev(11, &session.ToolStarted{Step: 2, CallID: "b"}),
			},
			end: &session.TurnEnded{Reason: session.ReasonInterrupted, Steps: 2, Usage: harness.Usage{InputTokens: 250, OutputTokens: 50}},
			warnings: []string{
				"turn 2 stopped in step 2 without an end (a crash or a kill); logged as interrupted, with 2 steps and 300 tokens used",
				"the bash call b was running: its outcome is unknown; the model is told so",
				"the write call c was not run: it had not started; the model is told so",
			},
		},
		{
			name:     "killed while the model answered",
			events:   []session.Event{ev(1, user("go")), ev(2, &session.ModelRequest{Step: 1})},
			end:      &session.TurnEnded{Reason: session.ReasonInterrupted, Steps: 1},
			warnings: []string{"turn 1 stopped in step 1 without an end (a crash or a kill); logged as interrupted, with 1 step and 0 tokens used"},
		},
		{
			name:     "killed before the first step",
			events:   []session.Event{ev(1, user("go"))},
			end:      &session.TurnEnded{Reason: session.ReasonInterrupted},
			warnings: []string{"turn 1 stopped before its first step without an end (a crash or a kill); logged as interrupted, with 0 steps and 0 tokens used"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := new(session.History).Add(tc.events...)
			end, warnings := h.Repair()
			assert.Equal(t, tc.end, end)
			var texts []string
			for _, w := range warnings {
				texts = append(texts, w.String())
			}
			assert.Equal(t, tc.warnings, texts)
		})
	}
}
