// Package permission decides, before a tool call runs, whether it may:
// allow, deny (with a reason the model reads), or ask the user.
//
// Rules are plain data in Claude Code's conventions, in three lists
// ([Rules]): deny beats ask, and ask beats allow. File tools are matched
// by gitignore-style path patterns (Read(.env), Edit(src/**),
// Edit(//etc/**) for an absolute path, Edit(~/.ssh/**) below the home
// directory); bash commands by prefix (Bash(npm run test:*)), exactly, or
// with * wildcards; any tool by its name, with wildcards
// (session_search, mcp__github__*, mcp__github). A compound command
// (&&, ||, ;, |, &, newlines, subshells, $( ), backticks, process
// substitution, the substitutions of here-documents) is split into its
// simple commands, and it is allowed only when every one of them is; a
// deny or ask rule matching any one of them decides the whole call. A
// redirection writing outside the workspace needs an Edit rule. What the
// splitter cannot read with certainty (a loop header, a function
// definition, an unterminated quote) is never allowed by a prefix rule.
// Path rules see a path as written (with ".." resolved) and with its
// symbolic links resolved: an allow rule must match both, a deny or ask
// rule either.
//
// A [Mode] decides what no rule does: [ModeDefault] asks for every call
// with side effects, [ModeAcceptEdits] also allows file changes inside the
// workspace, [ModePlan] denies every call with side effects whatever the
// allow rules say, and [ModeBypass] allows everything that no deny rule
// denies.
//
// [Policy.Decide] is pure and fast (a few microseconds with hundreds of
// rules). The loop (package agent) calls it for every call at dispatch,
// asks an [Approver] when one is configured, and otherwise pauses the
// turn durably so that any process can answer later.
//
// The Read and Edit rules also hold below the calls: [Policy.Paths] is the
// path policy they make for a workspace (see [Paths]), which fs.Restrict
// puts below every file tool (the loop does so for its sessions) and a
// sandbox enforces on commands (tools/shell's Bubblewrap). Deny rules
// decide there wherever they match; ask rules deny where nobody can be
// asked (listings, walks, other names of a hard-linked file, sandbox
// mounts).
//
// It imports harness, fs and tools; nothing of agent or session.
package permission
