// Package shell provides the tools that let a model run programs: the
// one-shot bash tool, background jobs, and persistent shell sessions.
//
// [Bash] runs each command in a fresh, non-interactive bash (no profile
// or rc files), with stdin closed and an environment that keeps programs
// from waiting on a terminal (pagers, editors and prompts off, TERM=dumb,
// NO_COLOR=1), in its own process group. The group is stopped with
// SIGTERM when the command's timeout passes or the call is cancelled, and
// with SIGKILL after a grace period; the result says which happened.
// Stdout and stderr are kept apart, each held in bounded memory (its head
// and tail), and a stream too long to show is written whole, as it
// arrives, to the session's output store (tools.Env.Output), so a command
// that prints gigabytes costs little memory and the model gets the tail
// and a spill:// locator the read tool can page through. A non-zero exit
// status is an ordinary result. [BashWithJobs] adds run_in_background and
// the bash_output and bash_kill tools.
//
// [Sessions] returns shell_open, shell_send, shell_read and shell_close:
// long-lived bash processes over pipes, without a terminal and without
// native dependencies, so that the current directory, variables,
// functions and background processes persist between commands. Each
// command is sent on one line, quoted whole and run by eval with stdin
// from /dev/null. The shell reports its start and end (exit status and
// current directory) on a status channel of its own, in records with a
// fresh random nonce printed by bash itself, so that no function, alias
// or builtin a command redefines can forge them; a command that breaks
// the protocol is reported, and the shell is then refused further
// commands (close it and open a new one). A command still running when
// the wait ends returns what it printed so far; shell_read returns what
// came since. Every result ends with the
// shell's current directory. Full-screen terminal programs are not
// supported, and the tool descriptions say so.
//
// Shells and jobs live in the agent session's tools.State: they belong to
// the session that started them, are limited in number, and are stopped,
// whole process groups, when the session or the loop closes. Shells also
// close after an idle timeout. The environment and sandbox ([Sandbox])
// of a shell are fixed when it opens and recorded in the session log.
//
// The working directory of a command is the session's (tools.Env.Cwd) or
// the one the call names, relative to it. When the file system maps its
// paths to OS paths (fs.LocalPather), directories outside its root are
// refused. Only the starting directory is confined: the processes
// themselves can reach whatever the OS user can, unless a Sandbox
// confines them.
//
// The tools need a Unix-like system with bash.
package shell
