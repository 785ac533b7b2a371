package main

import (
	"github.com/go-harness/harness/agent"
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
