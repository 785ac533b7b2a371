// Package permission decides, before a tool call runs, whether it may:
// allow, deny (with a reason the model reads), or ask the user.
//
// Rules are plain data in Claude Code's conventions, in three lists
// ([Rules]): deny beats ask, and ask beats allow. File tools are matched
// by gitignore-style path patterns (Read(.env), Edit(src/**),
// Edit(//etc/**) for an absolute path, Edit(~/.ssh/**) below the home
// directory); bash commands by prefix (Bash(npm run test:*)), exactly, or
// with * wildcards; any tool by its name, with wildcards
// (session_search, mcp__github__*, mcp__github). Path rules see a path
// as written (with ".." resolved) and with its symbolic links resolved:
// an allow rule must match both, a deny or ask rule either.
//
// Claude Code's names of tools this module names otherwise (Grep, Glob,
// Task, WebFetch, ...) name the same tools here ([ClaudeName] gives the
// reverse), and Skill(name) rules, with * wildcards, decide the loading
// of a skill by the skill tool. A [Narrowing] a tool records limits the
// rest of a turn to what its rules allow (a skill's allowed-tools).
//
// A [Mode] decides what no rule does: [ModeDefault] asks for every call
// with side effects (a line of read-only commands has none; see below),
// [ModeAcceptEdits] also allows file changes inside the
// workspace, [ModePlan] denies every call with side effects whatever the
// allow rules say, and [ModeBypass] allows everything that no deny rule
// denies.
//
// [Policy.Decide] is pure and fast (tens of microseconds with hundreds
// of rules; an asked call's suggestion is tried on the policy with it,
// which adds about a tenth of a millisecond to the decisions that ask a
// person). The loop (package agent) calls it for every call at
// dispatch, asks an [Approver] when one is configured, and otherwise
// pauses the turn durably so that any process can answer later.
//
// # Bash commands
//
// A command line is read by a bash parser (mvdan.cc/sh), and the rules
// are checked on what its syntax tree runs: every simple command of its
// lists, pipelines and compound commands (if, while, for, case, { },
// subshells, functions, coprocesses, [[ ]]), of its command and process
// substitutions wherever they are (arguments, assignments, redirection
// targets, here-documents, parameter expansions, arithmetic), and of
// the command lines its commands run from their arguments: bash -c and
// sh -c, eval, a shell reading a here-document, trap and alias actions,
// prompt variables, watch, flock -c, su -c, and the commands of
// wrappers read with their option syntax (timeout, nice, env, xargs,
// time, stdbuf, nohup, command, builtin, exec, sudo, doas, ionice, chrt,
// setsid, taskset, unbuffer, busybox, find -exec and -execdir, git's
// global options). A line is allowed only when every command it runs
// is; a deny or ask rule matching any one of them decides the whole
// line.
//
// Words are taken after quote removal. A deny or ask rule matches a
// command when it could: a word known only when the line runs (an
// expansion, a substitution, a glob, a brace expansion) may be
// whatever the rule names, so `$(echo rm) x`, `/usr/bin/r[m] x`,
// `{rm,-f,x}` and `$'rm' x` all match Bash(rm:*). An allow rule matches
// only what it certainly names: the words it covers written plainly.
// A wrapper that changes how, not what, runs (timeout, nice, env,
// bash -c) needs no rule of its own; the others (sudo, xargs, find,
// watch) need one for themselves and one for the command they run,
// unless a rule names both (Bash(sudo apt install:*)).
//
// Every word of every command may name a file: a word naming a path
// that a Read deny rule matches denies the command, whatever the
// program (cat, grep -r, base64, cp, tar -C ...); a glob is matched as
// the pattern it is. The files known writers change (tee, cp, mv,
// install, ln, rm, touch, truncate, mkdir, chmod, sed -i, dd of=, tar
// c -f, curl -o, find -delete ...) and those redirected to are checked
// as the write tool's path is: an Edit deny rule denies, an Edit ask
// rule asks, and a write outside the workspace needs an Edit allow
// rule. Paths resolve where the shell is when the command runs: cd and
// pushd are followed as far as their targets are known, and ~, ~/x and
// ~+ are expanded as bash does. After a cd to a place known only when
// it runs (and for ~- and ~user), a relative path is resolved from
// where the line started too, where a deny rule denies; that it may be
// elsewhere makes the line ask.
//
// What the rules cannot model is never allowed by a prefix rule: a
// line the parser refuses, a construct the walk does not know, an
// option of a wrapper it does not know, a redirection to a place known
// only when it runs. Code whose text exists only when the line runs
// (eval of an expansion, bash -c of one, a shell reading its input
// from a pipe, arithmetic on a variable whose value may hold an array
// subscript, ${x@P}, a git -c setting that names a command) is denied
// when any command deny rule exists, since it could be what the rule
// names, and asks otherwise.
//
// # Read-only commands
//
// A bash line whose every command only reads runs without asking in
// default and accept-edits mode: ls, cat, head, tail, wc, pwd, echo,
// printf, grep, egrep, fgrep, stat, du, df, which, basename, dirname,
// realpath, readlink, diff, cmp, md5sum, sha1sum, sha256sum, sha512sum,
// cut, nl, tac, rev, whoami, id, uname, printenv, true, false, test, [,
// cd; rg without --pre, --pre-glob, --hostname-bin or -z; find without
// -exec, -execdir, -ok, -okdir, -delete, -fprint, -fprint0, -fprintf or
// -fls; git status, diff, log and show without global options,
// --output or --ext-diff; tree without -o; file without -C. For rg,
// find, git, tree and file every argument must be written plainly (a
// glob or an expansion could become a refused one). The line may pipe
// them together, join them with ; && || and redirect their input, and
// their errors to /dev/null; an output redirection to a file, a command
// substitution or a pipe into anything else, an assignment, a wrapper
// (env, timeout, xargs) or a line the parser cannot model makes it an
// ordinary line, which asks. Everything else still applies: Read deny
// and ask rules on every word, command deny and ask rules, the sandbox.
// Plan mode denies them as every command, and a persistent shell
// (shell_send) asks for them, since an earlier command may have
// redefined a name or PATH. A repository's configuration can make git
// run programs (core.fsmonitor, diff.external): the sandbox, not this
// list, is the boundary for those.
//
// # Suggestions
//
// An asked call's Decision.Suggest is the rule an approver may offer to
// remember ("always"): the narrowest that covers the call and reads
// clearly (Bash(go test:*), Bash(npm run build:*), Edit(src/**),
// Edit(./main.go)), and only one the policy with it would allow the
// call by. None is offered for interpreters and shells (python3 -c,
// node -e, bash -c, sh), programs that run their arguments (env,
// xargs, find, timeout, sudo, npx), destructive families and
// subcommands (rm, dd, kill, git reset, docker rm), network transfers,
// a line of several commands, or a repository's .git files.
//
// # Threat model
//
// Prefix rules decide when to ask; they are not a boundary. An allowed
// program can run any other from what it reads: interpreters (python
// -c, node -e, perl -e, awk, sed's e and w commands, a script file),
// build and test tools (make, npm test running a script the agent
// wrote, go test -exec, git with an alias or a hook from the
// repository's configuration), and programs whose option syntax the
// rules do not model are taken as written, and what they run is not
// seen. Read and Edit rules on a command's words catch the paths it
// names, not the paths it reaches: grep -r pat . reads a denied file
// through recursion, a variable may hold a denied path, and a link or
// .. may lead into one (links are resolved for redirections and
// written files, not for every word). The boundary is the sandbox the
// shell tools run commands in (package tools/shell): it enforces the
// same Read and Edit rules on every file a command touches. A host
// that runs commands without that sandbox relies on these rules alone,
// and should treat bypass mode and broad allow rules accordingly.
//
// # Paths
//
// The Read and Edit rules also hold below the calls: [Policy.Paths] is the
// path policy they make for a workspace (see [Paths]), which fs.Restrict
// puts below every file tool (the loop does so for its sessions) and a
// sandbox enforces on commands (tools/shell's Bubblewrap). Deny rules
// decide there wherever they match; ask rules deny where nobody can be
// asked (listings, walks, other names of a hard-linked file, sandbox
// mounts).
//
// It imports harness, fs, tools, internal/configfile,
// golang.org/x/sys/unix and mvdan.cc/sh/v3/syntax; nothing of agent or
// session.
package permission
