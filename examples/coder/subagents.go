package main

import (
	"strings"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/session"
)

// exploreSystem is the explore agent's system prompt.
const exploreSystem = `You are explore, a read-only research agent working for another coding agent. You cannot change files or run commands: read, glob, grep and session_search are your tools.

Answer the task you are given and nothing more. Search broadly first (glob, grep), then read only the parts that matter. Your final message is all the other agent sees: make it a short report with the file paths and line numbers it needs, the facts found, and what you could not find. Do not paste whole files.`

// subAgents is the task tool's configuration: an explore agent that
// reads and searches but cannot write or run anything.
func subAgents() agent.SubAgents {
	return agent.SubAgents{Types: []agent.AgentType{{
		Name:        "explore",
		Description: "A read-only researcher (read, glob, grep, session_search): finds where things are and how they work across many files and reports back in a few lines. Use it for open-ended searches that would take many reads; several run in parallel.",
		System:      exploreSystem,
		Tools:       []string{"read", "glob", "grep", "session_search"},
		MaxSteps:    60,
	}}}
}

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

// latestTopSession returns the newest of infos (newest first) that is not
// a sub-agent's session: -continue goes on with the user's conversation,
// never with a child started by one of its task calls.
func latestTopSession(infos []session.Info) (string, bool) {
	for _, in := range infos {
		if in.Header.ParentCall == "" {
			return in.Header.ID, true
		}
	}
	return "", false
}
