// Package proctree starts a command so that every process it starts can
// be stopped with it, whatever those processes do to get away: new
// sessions (setsid), new process groups (setpgid, set -m, GNU timeout),
// double forks, SIGTERM ignored. The shell tools (tools/shell) run their
// commands, jobs and persistent shells through it, and the MCP package
// (tools/mcp) its stdio servers.
//
// [Probe] finds, once, the containment the system allows, and [Start]
// starts a command in it. On Linux each command runs in a cgroup of its
// own when the host process may make cgroups below its own in the cgroup
// v2 hierarchy (as root, or in a delegated subtree) and the kernel has
// cgroup.kill and CLONE_INTO_CGROUP: every process the command starts
// stays in it, the command is the host's own child, and cgroup.kill ends
// everything at once. The cgroup is removed when the command is over.
// Otherwise each command runs in a PID namespace
// of its own when the kernel allows it (as root, or inside a user
// namespace that maps only the current user): no process can leave a
// PID namespace, and when its first process ends the kernel kills all
// the others. That first process is a small init written in bash
// (harness-init in ps), which reaps orphans as PID 1 must; beside it a
// `sleep` named harness-exit-holder keeps the command's exit status
// until it has been read. A command that is its own init
// ([Command.Init]: bwrap, whose own PID namespace and init end everything
// when the command ends) is started as the namespace's first process
// instead, without the tools' init and holder. Where no PID namespace can
// be made (no
// privilege, user namespaces disabled, seccomp), the command's processes
// are followed as a tree: its descendants, through /proc, and every
// process whose environment carries the command's marker
// (HARNESS_SHELL_SCOPE), which finds processes that double-forked away.
// A process that leaves the tree and clears its environment cannot be
// found then, and [Proc.Partial] says so. On other Unix-like systems
// only the process group is followed.
//
// [Proc.Stop] sends SIGTERM to every process of the command, SIGKILL to
// what is left after the grace period (in a cgroup through cgroup.kill;
// in a PID namespace, to its init, which ends the rest), waits for them to go and returns an [Outcome]
// that names any survivor. [Proc.How] describes the containment in force,
// as "cgroup", "pid namespace" or "process tree (no pid namespace:
// operation not permitted)", for results and logs.
//
// Nothing machine-wide is changed beyond the commands' own cgroups: no
// sysctl, no controller settings, no mount outside the namespaces it
// creates, and the host process is not made a child subreaper (the setting is process-wide and would hand it the
// orphans of programs it did not start).
//
// A command that is its own init may ask for a network namespace of its
// own (Command.NewNet), made with its PID namespace as root; a thread of
// the host enters it only to bring its loopback device up.
//
// It imports the root package (for error codes), the standard library
// and golang.org/x/sys/unix.
package proctree
