package ui

import (
	"strings"

	"github.com/go-harness/harness/agent"
)

// subEvent shows a sub-agent's finished tool calls as lines nested under
// the task call that started it; the rest of its events stay in its log.
func (h *human) subEvent(e *agent.SubAgentEvent) {
	end, ok := e.Event.(*agent.ToolCallEnd)
	if !ok {
		return
	}
	h.endLine()
	mark, code := "●", sgrGreen
	if end.Result != nil && end.Result.IsError {
		mark, code = "✗", sgrRed
	}
	title := ""
	if end.Result != nil && end.Result.Render != nil {
		title = h.relText(end.Result.Render.Title)
	}
	if title == "" {
		title = strings.TrimSpace(end.Call.Name + " " + h.relText(firstStringArg(end.Call.Arguments)))
	}
	indent := strings.Repeat("  ", e.Depth)
	h.line(indent + h.st.paint(sgrDim, "⎿ ") + h.st.paint(code, mark) + " " + h.st.paint(sgrDim, e.Agent+": ") + cut(title, h.width-20-len(indent)))
}
