// Package shell provides the tools that let a model run programs: the
// one-shot bash tool, background jobs, and persistent shell sessions.
//
// [Bash] runs each command in a fresh, non-interactive bash (no profile
// or rc files), with stdin closed and an environment that keeps programs
// from waiting on a terminal (pagers, editors and prompts off, TERM=dumb,
// NO_COLOR=1). When the command's timeout passes or the call is
// cancelled, all its processes are sent SIGTERM, and SIGKILL after a
// grace period; the result says which happened, and names any process
// still running after that.
// Stdout and stderr are kept apart, each held in bounded memory (its head
// and tail), and a stream too long to show is written whole, as it
// arrives, to the session's output store (tools.Env.Output), so a command
// that prints gigabytes costs little memory and the model gets the tail
// and a spill:// locator the read tool can page through. A non-zero exit
// status is an ordinary result. [Tools] returns every shell tool: bash
// with run_in_background and the bash_output and bash_kill tools, and
// the persistent shells below; a host keeps the ones it wants by name.
//
// The persistent shells are shell_open, shell_send, shell_read and shell_close:
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
// with every process they started, when the session or the loop closes;
// closing returns an error matching harness.CodeNotStopped if anything
// outlived that. Shells also close after an idle timeout. The environment and
// sandbox ([Sandbox]) of a shell are fixed when it opens and recorded in
// the session log.
//
// # Containment
//
// A stop must reach processes that left the command's process group:
// daemons, setsid, setpgid, `set -m`, GNU timeout, Python's
// start_new_session. On Linux every one-shot command, background job and
// persistent shell therefore runs in a PID namespace of its own, made
// once the tools have checked, the first time they start something,
// that the kernel allows it: as root with clone(CLONE_NEWPID) and a
// private mount namespace in which the namespace gets its own /proc;
// otherwise inside a user namespace that maps only the current user and
// group, where /proc stays the host's. No process can leave a PID
// namespace, and when its first process ends the kernel kills all the
// others. That first process is a small init written in bash
// (harness-init in ps), which reaps orphans as PID 1 must; beside it a
// `sleep` named harness-exit-holder keeps the command's exit status until
// the tools have read it. Under [Bubblewrap], whose bwrap makes a PID
// namespace and an init of its own that end every process of the sandbox
// when the command ends, the sandbox's command line is itself the first
// process of the tools' namespace (setting the limits, then running bwrap),
// without that init and holder. A stop sends SIGTERM to every other
// process of the namespace, waits up to the grace period, and then sends
// SIGKILL to the init, which ends the rest. Inside a namespace, pids are the
// namespace's own and a command cannot signal the processes of another
// command or job; the tool descriptions tell the model to stop jobs with
// bash_kill.
//
// Where no PID namespace can be made (no privilege, user namespaces
// disabled, seccomp), the tools follow the command's process tree
// instead: its descendants, through /proc, and every process whose
// environment carries the command's marker (HARNESS_SHELL_SCOPE, set in
// the command's environment), which finds processes that double-forked
// away from the tree. A process that leaves the tree and clears its
// environment cannot be found; results then say "all that could be
// found". The tools do not make the host process a child subreaper: the
// setting is process-wide and would hand the tools orphans of programs
// they did not start. On other Unix-like systems only the process group
// is followed. Every result that reports a stop, and the results of
// shell_open and of starting a job, end with a line such as
// "[containment: pid namespace]" or "[containment: process tree (no pid
// namespace: operation not permitted)]", and the session log records the
// containment of each shell.
//
// Nothing machine-wide is changed: no cgroup, no sysctl, no mount outside
// the namespaces the tools create (the sandbox's pid_max is the command's
// own namespace's).
//
// # Sandbox
//
// Permission rules decide when to ask; they are not a boundary (an
// interpreter, make or go test -exec runs anything). The sandbox is the
// boundary, and it enforces the same rules as the file tools.
//
// [Bubblewrap] confines commands on Linux with bubblewrap (bwrap). The root
// file system is read-only; /dev, /dev/shm, /proc and /tmp are the
// sandbox's own (/tmp and /dev/shm of BubblewrapConfig.TmpSize bytes, 2 GiB
// by default, so a disk filler stops there; HOME is a private directory on
// /tmp); the workspace is writable unless ReadOnly. Host /home, /root, the
// host's HOME, /run (and /var/run), /var/tmp, /media and /mnt are hidden,
// and every unix socket listening in the host's network namespace that a
// command could otherwise see (in the workspace, say) gets an empty file
// over it, since a read-only mount does not stop connect(2); Readable and
// Writable bring back what the host names (a module cache, a socket).
// Abstract unix sockets belong to a network namespace: with the network
// off (the default) the command has its own, with the network on it shares
// the host's.
//
// BubblewrapConfig.Paths carries the path policy of the permission rules
// (permission.Policy.Paths), the one the file tools obey below every call
// (fs.Restrict): a path it denies for reading is masked (an empty
// read-only file over a file, an empty read-only directory over a
// directory; the target of a denied symbolic link is masked), a path it
// denies for changing is bound read-only, and ask rules count as deny,
// since no one can be asked inside a command. The directories between the
// workspace and each masked or protected path become mount points, which
// cannot be renamed: otherwise `mv secrets-parent elsewhere` would carry a
// secret to a name the rules do not cover, for the next command and for
// the file tools. Patterns are matched against what exists when a command
// starts: every one-shot command and background job gets masks made then
// (the walk covers only the trees the rules name, plus the whole workspace
// for a pattern without a slash such as .env), and a persistent shell keeps
// those it got when it opened: a file that comes to match a rule later is
// not masked in a shell already open.
//
// As root too, a command runs in a user namespace of its own with every
// capability dropped and further user namespaces disabled, so mount,
// remount, chroot, unshare, raw sockets and ptrace fail, and in a PID
// namespace of its own, so no host process can be seen or signalled.
// Limits (BubblewrapConfig.Limits) bound each command: its address space
// and file size (RLIMIT_AS, RLIMIT_FSIZE: 8 GiB each), and its processes (a
// fork bomb): for a user other than root, RLIMIT_NPROC inside a user
// namespace of the command's own, where no other process of the user
// counts; as root, whom RLIMIT_NPROC does not bind, the pid_max of the PID
// namespace the tools made for the command (Linux 6.14 and later keep
// pid_max per namespace). As root on an older kernel, or where the tools
// could make no PID namespace, nothing bounds the processes, and the
// sandbox's description (in the tool text and the log) says so. The
// defaults fit a parallel go build and go test -race. A command run by
// root is still root to the files it can see, without capabilities:
// root-only files of the read-only root file system (/etc/shadow, host
// keys) stay readable unless a Read rule denies them (Read(//etc/shadow)).
//
// Landlock and a seccomp filter were considered and are not used: Landlock
// applies to the process that asks for it, so it would need a helper
// program started before each command, and it grants access by
// allow-list, which cannot express "this workspace except these paths"
// without listing every sibling of every denied path; bwrap's mounts do the
// same job in the kernel already, for every process of the command. A
// seccomp filter could refuse unix sockets wholesale, which breaks
// programs that use them between their own processes, and cannot look at
// the path a connect names; masking the listening sockets is exact.
//
// The environment of a command under any sandbox is built from an
// allow-list (PATH, LANG, LANGUAGE, LC_*, TZ, USER, LOGNAME, HOSTNAME,
// SHELL, TERM, plus Config.PassEnv and Config.Env), never the host's
// credentials. Without a sandbox, commands get the host's environment
// without the variables that look like credentials (*_API_KEY, *_KEY,
// *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*, AWS_*, DATABASE_URL,
// SSH_AUTH_SOCK, ...), unless Config.PassEnv names them. The tool
// descriptions say which applies, and the session log records the names
// withheld (never their values).
//
// Without a sandbox (Config.Sandbox) commands run unconfined, and the log
// says so. When bwrap is missing or cannot make its namespaces, Bubblewrap
// fails with harness.CodeSandboxUnavailable and a plain message; the host
// chooses to refuse commands or to run them unconfined. The sandbox in
// force is recorded in the session log: by bash once per session, and by
// each shell when it opens.
//
// The working directory of a command is the session's (tools.Env.Cwd) or
// the one the call names, relative to it. When the file system maps its
// paths to OS paths (fs.LocalPather), directories outside its root are
// refused. Only the starting directory is confined: the processes
// themselves can reach whatever the OS user can, unless a Sandbox
// confines them.
//
// The tools need a Unix-like system with bash.
//
// Failures carry harness codes: beside the dispatcher's (invalid_arguments,
// timeout, aborted), harness.CodeBusy (the persistent shell still runs a
// command), harness.CodeNotFound (no such shell or job),
// harness.CodeSandboxUnavailable, and the codes only this package reports
// (CodeBadWorkdir, CodeNoShell, CodeSandboxDenied, CodeShellBroken,
// CodeTooManyShells, CodeTooManyJobs, CodeUnsupported). Match one with
// errors.Is(err, shell.CodeNoShell) or by comparing a result's Code.
//
// It imports harness, fs, tools and internal helpers (every output stream
// is written through internal/spillwriter's Writer, the one the spill
// policy uses, which saves it as it arrives; the containment above is
// internal/proctree's, which tools/mcp uses for its stdio servers too);
// nothing of spill, session or agent.
package shell
