// Package persistent implements the persistent shells of the shell
// tools: shell_open, shell_send, shell_read and shell_close. Hosts get
// them from shell.Tools; this package is how they work.
//
// A shell is one long-lived bash over pipes, without a terminal. The
// current directory, variables, functions and background processes
// persist between commands. Full-screen terminal programs are not
// supported, and the tool descriptions say so.
//
// # Protocol
//
// Each command is sent on one line, quoted whole, and run by eval with
// stdin from /dev/null. The shell reports the end of each command (exit
// status, current directory) on a status channel of its own, in a record
// with a fresh random nonce that bash prints itself. No function, alias
// or builtin a command redefines can forge it. On Linux the harness
// looks at where the shell's stdout and stderr lead in /proc; elsewhere
// the line checks them.
//
// A command that breaks the protocol is reported, and the shell is then
// refused further commands: close it and open a new one. protocol.go
// explains the records and what they defend against.
//
// # Lifetime
//
// A command still running when the wait ends returns what it printed so
// far; shell_read returns what came since. Every result ends with the
// shell's current directory.
//
// Shells live in the agent session's tools.State. They are limited in
// number, close after an idle timeout, and are stopped with every process
// they started when the session or the loop closes. The environment and
// sandbox of a shell are fixed when it opens and recorded in the session
// log as a "shell_open" record.
//
// It imports harness, tools, the shell tools' shellkit and internal
// helpers.
package persistent
