package session

import (
	"fmt"
	"slices"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/units"
)

// History derives the conversation a session's events describe: the
// messages the model is sent, in order. Tool results are placed right
// after the assistant message that made the calls, in call order, whatever
// order they finished in; reminders follow them.
//
// A session that stopped mid-turn (a crash, a kill) is repaired in the
// derived messages, never in the log: a call that never started gets a
// result saying it was not run, a started call without a result gets one
// saying its outcome is unknown, and Repair returns the end an open turn needs.
// Events of unknown types are skipped.
//
// The zero History is empty and ready to use. Add events in log order;
// Messages may be called at any point.
type History struct {
	msgs []harness.Message
	// shared: View handed out msgs' array, which must then not change in
	// place (see own).
	shared bool
	// pending maps a call id to the result slots of the current step's
	// calls with that id, in call order (a provider may repeat an id).
	pending map[string][]*slot
	order   []*slot
	// step is the step of the last assistant message.
	step   int
	turns  int
	open   bool
	system string
	usage  harness.Usage
	// context is the project context of the stable prefix; announced
	// are the nested files announced in the messages.
	context   []ContextFile
	announced []announced
	// files records what each tool result read or wrote, for pruning.
	files []resultFiles
	// callIDs holds the id of every call the session's assistant
	// messages made.
	callIDs map[string]struct{}
	// turnSteps and turnUsage are the highest step and the usage the
	// last turn has logged; turnRepaired the calls of it that got a
	// synthetic result.
	turnSteps    int
	turnUsage    harness.Usage
	turnRepaired []*slot
}

type slot struct {
	index   int
	call    harness.ToolCall
	started bool
	done    bool
	// block is the content of the call's tool message until a synthetic
	// result replaces it; result is what block points to.
	block  [1]harness.Block
	result harness.ToolResult
}

// Add applies events, in log order, and returns h, so that
// new(session.History).Add(tr.Events...) derives the history of a loaded
// session in one expression, as new(big.Int).Add(x, y) sums. Blocks and
// content items that lack their payload (a tool_call block without its
// call, say) are left out, as loading leaves them out, so the derived
// messages are always whole.
func (h *History) Add(events ...Event) *History {
	for _, e := range events {
		h.add(e)
	}
	return h
}

// add applies one event.
func (h *History) add(e Event) {
	data, _, keep := cleanPayload(e.Data)
	if !keep {
		return
	}
	switch p := data.(type) {
	case *UserMessage:
		h.closeSlots()
		h.msgs = append(h.msgs, harness.Message{Role: harness.RoleUser, Content: contentBlocks(p.Content)})
		if p.Steer {
			break // a message into the running turn
		}
		h.turns++
		h.open = true
		h.turnSteps, h.turnUsage, h.turnRepaired = 0, harness.Usage{}, nil
	case *AssistantMessage:
		h.closeSlots()
		h.step = p.Step
		h.turnSteps = max(h.turnSteps, p.Step)
		h.msgs = append(h.msgs, harness.Message{Role: harness.RoleAssistant, Content: p.Content})
		if p.Usage != nil {
			h.usage.Add(*p.Usage)
			h.turnUsage.Add(*p.Usage)
		}
		for _, c := range (harness.Message{Content: p.Content}).ToolCalls() {
			s := &slot{index: len(h.msgs), call: c}
			// The slot holds the message's one block and its result, filled
			// in place when the result comes: nobody sees them before.
			s.result = harness.ToolResult{CallID: c.ID, Name: c.Name}
			s.block[0] = harness.Block{Type: harness.BlockToolResult, ToolResult: &s.result}
			h.msgs = append(h.msgs, harness.Message{Role: harness.RoleTool, Content: s.block[:]})
			if h.pending == nil {
				h.pending = map[string][]*slot{}
			}
			h.pending[c.ID] = append(h.pending[c.ID], s)
			h.order = append(h.order, s)
			if h.callIDs == nil {
				h.callIDs = map[string]struct{}{}
			}
			h.callIDs[c.ID] = struct{}{}
		}
	case *ToolStarted:
		if s := h.slotFor(p.Step, p.CallID, func(s *slot) bool { return !s.started && !s.done }); s != nil {
			s.started = true
		}
	case *ToolFinished:
		if s := h.slotFor(p.Step, p.CallID, func(s *slot) bool { return !s.done }); s != nil {
			s.done = true
			s.result = harness.ToolResult{
				CallID: p.CallID, Name: s.call.Name, Content: p.Result.Content,
				IsError: p.Result.IsError, Code: p.Result.Code,
			}
			if len(p.Result.Files) > 0 {
				h.files = append(h.files, resultFiles{index: s.index, seq: e.Seq, callID: p.CallID, tool: s.call.Name, files: p.Result.Files})
			}
		}
	case *ModelRequest:
		// A step starts with its request: a turn that stopped while the
		// model answered has made that step.
		h.turnSteps = max(h.turnSteps, p.Step)
	case *Reminded:
		h.msgs = append(h.msgs, harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(reminderText(p.Text))}})
	case *TurnEnded:
		if p.Reason != ReasonAwaitingApproval && p.Reason != ReasonAwaitingInput && p.Reason != ReasonAwaitingTool {
			h.closeSlots() // a paused turn's calls wait for their answer
		}
		h.open = false
	case *SystemPrompt:
		h.system = p.Text
	case *Pruned:
		h.applyPruned(p)
	case *Compacted:
		h.applyCompacted(p)
	case *ContextLoaded:
		h.addContext(p)
	}
}

// slotFor returns the first call of the current step with this id that
// want accepts, or nil. A tool event of another step (when both steps are
// known) matches nothing: call ids need not be unique across steps.
func (h *History) slotFor(step int, id string, want func(*slot) bool) *slot {
	if step != 0 && h.step != 0 && step != h.step {
		return nil
	}
	for _, s := range h.pending[id] {
		if want(s) {
			return s
		}
	}
	return nil
}

// CallIDUsed reports whether an assistant message of the session made a
// call with this id. The ids a session gives calls must be new to it, so
// that a result, a pruning or a search hit names one call.
func (h *History) CallIDUsed(id string) bool {
	_, ok := h.callIDs[id]
	return ok
}

// closeSlots gives every unanswered call of the previous step a synthetic
// result; it runs when the conversation moves on without them.
func (h *History) closeSlots() {
	for _, s := range h.order {
		if !s.done {
			h.own()
			h.msgs[s.index].Content = []harness.Block{{Type: harness.BlockToolResult, ToolResult: syntheticResult(s)}}
			s.done = true
			if h.open {
				h.turnRepaired = append(h.turnRepaired, s)
			}
		}
	}
	h.order = h.order[:0]
	clear(h.pending)
}

func syntheticResult(s *slot) *harness.ToolResult {
	r := &harness.ToolResult{CallID: s.call.ID, Name: s.call.Name, IsError: true}
	if s.started {
		r.Code = harness.CodeOutcomeUnknown
		r.Content = []harness.Block{harness.TextBlock(fmt.Sprintf(
			"The outcome of this %s call is unknown: the session stopped while it was running. "+
				"Verify its side effects before relying on them, and retry only work that is safe to repeat.", s.call.Name))}
	} else {
		r.Code = harness.CodeNotRun
		r.Content = []harness.Block{harness.TextBlock(fmt.Sprintf(
			"This %s call was not run: the session stopped before it started. Nothing was changed by it.", s.call.Name))}
	}
	return r
}

// Messages returns a copy of the derived messages. Calls still waiting
// for a result get synthetic results in the copy. The blocks are shared
// with the History: treat them as read-only and copy before changing.
func (h *History) Messages() []harness.Message {
	out := make([]harness.Message, len(h.msgs))
	copy(out, h.msgs)
	for _, s := range h.order {
		if !s.done {
			m := out[s.index]
			m.Content = []harness.Block{{Type: harness.BlockToolResult, ToolResult: syntheticResult(s)}}
			out[s.index] = m
		}
	}
	return out
}

// View returns the derived messages as Messages does, without copying
// them when it can: when no call waits for a result, it returns the
// History's own messages, which the History never changes afterwards
// (it copies them before changing one in place). Treat the slice and its
// blocks as read-only.
func (h *History) View() []harness.Message {
	for _, s := range h.order {
		if !s.done {
			return h.Messages()
		}
	}
	h.shared = true
	return h.msgs[:len(h.msgs):len(h.msgs)]
}

// own makes msgs the History's own before a message changes in place:
// a copy, when View handed the array out.
func (h *History) own() {
	if h.shared {
		h.msgs = slices.Clone(h.msgs)
		h.shared = false
	}
}

// Turns returns the number of turns: user messages but those steered
// into a running turn.
func (h *History) Turns() int { return h.turns }

// Repair says how to close the last turn of a session that stopped
// mid-turn: the turn end to log (ReasonInterrupted, with the steps and
// the usage the log holds for the turn) and a warning for the turn and
// for each of its calls whose result the history made up, naming the
// call and what its result says. It returns nil and no warnings when the
// last turn ended.
func (h *History) Repair() (*TurnEnded, []Warning) {
	if !h.open {
		return nil, nil
	}
	calls := slices.Clone(h.turnRepaired)
	for _, s := range h.order {
		if !s.done {
			calls = append(calls, s)
		}
	}
	steps := "before its first step"
	if h.turnSteps > 0 {
		steps = fmt.Sprintf("in step %d", h.turnSteps)
	}
	warnings := []Warning{{Message: fmt.Sprintf("turn %d stopped %s without an end (a crash or a kill); logged as interrupted, with %s and %s used",
		h.turns, steps, units.Plural(h.turnSteps, "step", "steps"), units.Plural(h.turnUsage.InputTokens+h.turnUsage.OutputTokens, "token", "tokens"))}}
	for _, s := range calls {
		what := "was not run: it had not started"
		if s.started {
			what = "was running: its outcome is unknown"
		}
		warnings = append(warnings, Warning{Message: fmt.Sprintf("the %s call %s %s; the model is told so", s.call.Name, s.call.ID, what)})
	}
	return &TurnEnded{Reason: ReasonInterrupted, Steps: h.turnSteps, Usage: h.turnUsage}, warnings
}

// Pending returns the calls of the last step that have no result yet.
func (h *History) Pending() []harness.ToolCall {
	var out []harness.ToolCall
	for _, s := range h.order {
		if !s.done {
			out = append(out, s.call)
		}
	}
	return out
}

// SystemPrompt returns the last logged system prompt.
func (h *History) SystemPrompt() string { return h.system }

// Usage returns the token usage of every logged model call.
func (h *History) Usage() harness.Usage { return h.usage }

// reminderText wraps advisory harness text the way the model sees it.
func reminderText(s string) string { return "<system-reminder>\n" + s + "\n</system-reminder>" }
