package permission

// claudeTools maps the names of Claude Code's tools to the tools of this
// module that do the same work, so that a rule, a hook matcher or a
// skill's allowed-tools written for Claude Code names the same calls
// here. Read, Edit, Write, MultiEdit, Bash and WebFetch are rule kinds
// of their own (they take a path, a command or a domain), and WebSearch
// is the name rule for web_search; the names below are matched as
// names, with these aliases. A tool a host did not add (todo_write, say)
// matches nothing.
var claudeTools = map[string][]string{
	"Grep":       {"grep"},
	"Glob":       {"glob"},
	"LS":         {"glob"},
	"Task":       {"task"},
	"Agent":      {"task"},
	"TodoWrite":  {"todo_write"},
	"Skill":      {"skill"},
	"BashOutput": {"bash_output"},
	"KillShell":  {"bash_kill"},
	"KillBash":   {"bash_kill"},
}

// claudeNames maps this module's tools to the Claude Code name a hook
// or a rule written for Claude Code uses for them.
var claudeNames = map[string]string{
	"bash":        "Bash",
	"shell_send":  "Bash",
	"read":        "Read",
	"read_image":  "Read",
	"write":       "Write",
	"edit":        "Edit",
	"glob":        "Glob",
	"grep":        "Grep",
	"task":        "Task",
	"web_fetch":   "WebFetch",
	"web_search":  "WebSearch",
	"todo_write":  "TodoWrite",
	"skill":       "Skill",
	"bash_output": "BashOutput",
	"bash_kill":   "KillShell",
}

// ClaudeName returns the name Claude Code gives the tool this module
// calls name ("Bash" for bash and shell_send, "Read" for read and
// read_image, "Grep" for grep, ...), or name itself when Claude Code has
// no such tool (an MCP tool's mcp__server__tool is the same in both).
func ClaudeName(name string) string {
	if c, ok := claudeNames[name]; ok {
		return c
	}
	return name
}
