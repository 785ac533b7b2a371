package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// todoName is the model-facing name of the plan tool.
const todoName = "todo"

// maxTodoItems bounds a plan.
const maxTodoItems = 50

// todoArgs are the todo tool's arguments.
type todoArgs struct {
	Items []harness.TodoItem `json:"items" jsonschema:"the whole plan, in order; it replaces the previous one"`
}

// WithTodo gives the model the todo tool: it keeps a short plan, items
// with a status (pending, in_progress, done), replaced whole on each
// call. A valid plan is the call's result, with render intent
// harness.RenderTodo, and the host also gets a TodoUpdated event; the
// plan is kept in the log, so Session.Todo returns it after
// ResumeSession too. When compaction summarizes the history, the
// current plan is shown to the model again after the summary (a
// reminder with source "todo"), so the plan outlives what it replaced.
func WithTodo() Option { return func(c *config) { c.todo = true } }

func todoTool() tools.Tool {
	spec := tools.Spec{
		Name: todoName,
		Description: "Keep a short plan of the work as a checklist, for you and the user. Each call replaces the whole list: send every item, " +
			"each with its status (pending, in_progress or done). Use it for work of several steps: write the plan first, mark an item in_progress " +
			"when you start it (one at a time) and done as soon as it is finished. Skip it for a single simple step.",
		Render: harness.RenderTodo,
	}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in todoArgs) (*harness.ToolResult, error) {
		if err := checkTodo(in.Items); err != nil {
			return nil, err
		}
		return todoResult(in.Items), nil
	})
}

// checkTodo reports what is wrong with a plan.
func checkTodo(items []harness.TodoItem) error {
	bad := func(format string, args ...any) error {
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf(format, args...)}
	}
	if len(items) > maxTodoItems {
		return bad("%d items is too many for a plan (at most %d): group them", len(items), maxTodoItems)
	}
	doing := 0
	for i, it := range items {
		if strings.TrimSpace(it.Content) == "" {
			return bad("item %d has no content", i+1)
		}
		switch it.Status {
		case harness.TodoPending, harness.TodoDone:
		case harness.TodoInProgress:
			doing++
		default:
			return bad("item %d has the status %q; use pending, in_progress or done", i+1, it.Status)
		}
	}
	if doing > 1 {
		return bad("%d items are in_progress; work on one at a time", doing)
	}
	return nil
}

// todoResult is the result of a valid plan: the plan as the model reads
// it, and its card.
func todoResult(items []harness.TodoItem) *harness.ToolResult {
	text := "The plan is updated."
	if len(items) == 0 {
		text = "The plan is cleared."
	} else {
		text += "\n" + planText(items)
	}
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(text)},
		Render:  &harness.Render{Kind: harness.RenderTodo, Title: "Plan", Todo: items},
	}
}

// planText writes a plan as a checklist.
func planText(items []harness.TodoItem) string {
	var b strings.Builder
	for i, it := range items {
		mark := "[ ]"
		switch it.Status {
		case harness.TodoInProgress:
			mark = "[~]"
		case harness.TodoDone:
			mark = "[x]"
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s %s", mark, it.Content)
	}
	return b.String()
}

// planOf returns the plan a todo result holds, and whether it holds one.
func planOf(name string, res *harness.ToolResult) ([]harness.TodoItem, bool) {
	if name != todoName || res == nil || res.IsError || res.Render == nil || res.Render.Kind != harness.RenderTodo {
		return nil, false
	}
	return res.Render.Todo, true
}

// Todo returns the model's current plan (the todo tool's last valid
// list), or nil before it made one. A resumed session has it from the
// log.
func (s *Session) Todo() []harness.TodoItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]harness.TodoItem(nil), s.todo...)
}

// notePlan keeps the plan of a todo result, and tells the host.
func (t *turn) notePlan(step int, c harness.ToolCall, res *harness.ToolResult) {
	if !t.l.cfg.todo {
		return
	}
	items, ok := planOf(c.Name, res)
	if !ok {
		return
	}
	t.s.mu.Lock()
	t.s.todo = items
	t.s.mu.Unlock()
	t.emit(&TodoUpdated{Step: step, CallID: c.ID, Items: items})
}

// restoreTodo takes the last plan from the log of a resumed session.
func (s *Session) restoreTodo(events []session.Event) {
	if !s.loop.cfg.todo {
		return
	}
	for i := len(events) - 1; i >= 0; i-- {
		f, ok := events[i].Data.(*session.ToolFinished)
		if !ok {
			continue
		}
		if items, ok := planOf(f.Name, &f.Result); ok {
			s.todo = items
			return
		}
	}
}

// reshowPlan shows the model its plan again after a compaction
// replaced the history it was in.
func (t *turn) reshowPlan(step int) {
	if !t.l.cfg.todo {
		return
	}
	items := t.s.Todo()
	if len(items) == 0 {
		return
	}
	r := harness.Reminder{Source: todoName, Text: "The earlier conversation was summarized. Your plan (the todo list) so far:\n" + planText(items)}
	if err := t.s.append(t.ctx, &session.Reminded{Reminder: r}); err != nil {
		t.s.logger.Error("logging the plan after a compaction failed", "error", err)
		return
	}
	t.emit(&ReminderAdded{Step: step, Reminder: r})
}
