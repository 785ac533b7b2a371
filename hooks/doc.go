// Package hooks runs the command hooks of Claude Code's settings files
// on the agent loop, so that hooks written for Claude Code (and Codex,
// which adopted the format) work unchanged.
//
// # Settings
//
// [Load] reads the "hooks" of .harness/settings.json in the project,
// and, when the host turns on the compatibility (Config.Claude), of
// .claude/settings.json, .claude/settings.local.json and
// ~/.claude/settings.json; all of them run, in that order. The schema is
// Claude Code's: an event, matcher groups (a tool-name regular
// expression such as Bash, Edit|Write or mcp__server__.*, matched
// against the whole name; empty or * for all), and command hooks with
// an optional timeout in seconds (60 by default). Hook types other than
// command (prompt, http, agent) are skipped with a warning;
// "disableAllHooks": true in any file turns them all off.
//
// # The protocol
//
// A hook gets the event as JSON on its standard input: session_id,
// transcript_path, cwd, permission_mode, hook_event_name, and the
// event's own fields (tool_name, tool_input and tool_use_id;
// tool_response after a call; error and is_interrupt after a failed
// call; prompt; stop_hook_active and last_assistant_message; source
// and model; trigger; reason; message and notification_type; agent_id
// and agent_type). Exit status 0 is success: standard output may be
// JSON (continue, stopReason, suppressOutput, systemMessage,
// decision/reason, hookSpecificOutput with permissionDecision,
// permissionDecisionReason, updatedInput, additionalContext), and for
// SessionStart and UserPromptSubmit plain standard output is context
// for the model. Exit status 2 blocks where the event can be blocked,
// with standard error as the reason. Any other status, a timeout or a
// kill is a non-blocking error shown to the host (a tool call's
// progress message), never to the model. All matching hooks of an event
// run at once; the same command line runs once.
//
// Tools are matched and described by Claude Code's names (Bash for bash
// and shell_send, Read, Write, Edit, Glob, Grep, Task, WebFetch,
// WebSearch, TodoWrite, Skill; MCP tools are mcp__server__tool in both)
// as well as by their own, and tool_input carries the fields such hooks
// read: command, file_path (absolute, as Claude Code gives it), content,
// old_string, new_string, pattern, path, and Claude Code's names for
// the few arguments named otherwise here (timeout for timeout_ms,
// subagent_type for agent, -i, -A, -B, -C for grep's), which an
// updatedInput may use too.
//
// # Seams
//
// A [Runner] is an adapter over the loop's seams, not a second
// mechanism ([Runner.Options] installs them):
//
//   - tool middleware (agent.Hooks.Tools) runs PreToolUse, PostToolUse
//     and PostToolUseFailure around every call: built-in tools, MCP
//     tools, the task tool and the calls of sub-agents, whose loops share
//     the parent's middleware. A PreToolUse updatedInput is checked
//     again, against the tool's schema and by the permission policy
//     (agent.Recheck), before the call runs with it; "ask" goes to the
//     loop's approver (agent.Confirm). "allow" widens nothing: the
//     policy decided before hooks run.
//   - lifecycle calls (agent.WithLifecycle) run SessionStart (or
//     SubagentStart), UserPromptSubmit, Stop (or SubagentStop),
//     PreCompact and SessionEnd.
//   - a turn observer runs Notification hooks when a turn pauses for
//     approval, and [Runner.Approver] wraps a synchronous approver with
//     PermissionRequest (and Notification) hooks.
//
// Where this differs from Claude Code, it fails closed: a PreToolUse
// hook whose output starts as a JSON object and does not parse blocks
// the call (its decision cannot be read), and a hook's "allow" never
// skips the permission policy.
//
// # Running a hook
//
// A hook runs as bash -c, in the session's working directory (its OS
// path), under the same rules as the agent's commands: with the shell
// tools' sandbox when the host gives one (Config.Sandbox), its
// processes held together so that all of them stop (package
// internal/proctree: a PID namespace where the kernel allows), and an
// environment built from an allow-list (PATH, locale, USER, SHELL, TMPDIR,
// HOME without a sandbox; what the host names in Config.PassEnv and
// Config.Env) plus CLAUDE_PROJECT_DIR: no credential of the host's
// environment reaches it. It runs at most its timeout (capped by
// Config.MaxTimeout); what it leaves running is stopped when it exits;
// its standard output and error are kept up to Config.MaxOutput each,
// and a hook that writes sixteen times more is stopped. A hook that
// hangs, floods, crashes or prints garbage is reported and the turn
// goes on. Every run is logged to the session (session.HookRun: event,
// matcher, command, exit status or signal, timeout, decision, reason,
// error, duration).
//
// It imports harness, agent, fs, session, tools, tools/permission and
// internal helpers; nothing imports it but programs.
package hooks
