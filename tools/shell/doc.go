// Package shell provides the tools that let a model run programs: the
// one-shot bash tool, background jobs, and persistent shells.
//
// [Tools] returns every shell tool: bash (with run_in_background),
// bash_output and bash_kill, and shell_open, shell_send, shell_read and
// shell_close. A host keeps the ones it wants by name. [Bash] returns the
// bash tool alone. Both take a [Config]; its zero value is the default.
//
// The tools need a Unix-like system with bash.
//
// # One-shot commands
//
// Each bash call runs in a fresh, non-interactive bash: no profile or rc
// files, stdin closed. The environment keeps programs from waiting on a
// terminal: pagers, editors and prompts are off, TERM=dumb, NO_COLOR=1.
//
// Stdout and stderr are kept apart, each in bounded memory (its head and
// tail). A stream too long to show is written whole, as it arrives, to
// the session's output store (tools.Env.Output). A command that prints
// gigabytes so costs little memory, and the model gets the tail and a
// spill:// locator the read tool can page through.
//
// A non-zero exit status is an ordinary result. When the timeout passes
// or the call is cancelled, every process of the command gets SIGTERM,
// then SIGKILL after a grace period. The result says which happened and
// names any process still running after that.
//
// # Persistent shells
//
// shell_open starts a long-lived bash over pipes, without a terminal and
// without native dependencies. The current directory, variables,
// functions and background processes persist between commands.
//
// Each command is sent on one line, quoted whole, and run by eval with
// stdin from /dev/null. The shell reports a command's end (exit status,
// current directory) on a status channel of its own, in a record
// carrying a fresh random nonce printed by bash itself: no function,
// alias or builtin a command redefines can forge it. A command that
// breaks the protocol is reported, and the shell refuses further
// commands; close it and open a new one.
//
// A command still running when the wait ends returns what it printed so
// far; shell_read returns what came since. Every result ends with the
// shell's current directory. Full-screen terminal programs are not
// supported, and the tool descriptions say so.
//
// # Lifetime
//
// Background jobs are jobs of the session's job registry (package jobs,
// through jobs.FromState): it numbers them (job1, job2, ... shared with
// every other kind of job), knows how each ended, lets job tools list,
// read and stop them, and queues a completion notice naming bash_output
// for each job whose end no bash_output or bash_kill result showed.
//
// Shells and jobs live in the session's tools.State. They belong to the
// session that started them and are limited in number. They stop, with
// every process they started, when the session or the loop closes;
// closing returns an error matching harness.CodeNotStopped if anything
// outlived that. Shells also close after an idle timeout.
//
// A shell's environment and sandbox are fixed when it opens and recorded
// in the session log.
//
// # Containment
//
// A stop must reach processes that left the command's process group:
// daemons, setsid, setpgid, `set -m`, GNU timeout, Python's
// start_new_session.
//
// On Linux, where the host process may make cgroups below its own in
// the cgroup v2 hierarchy (as root, or in a delegated subtree) and the
// kernel has cgroup.kill (5.14 and later), every command, job and shell
// runs in a cgroup of its own, made for it and removed when it is over.
// The kernel starts the command in it (CLONE_INTO_CGROUP), and every
// process the command starts stays in it whatever it does to its session,
// process group or parent. The command is the tools' own child, so
// nothing else is started with it: no init, no holder.
//
// Elsewhere each runs in a PID namespace of its own. The tools check once,
// the first time they start something, what the kernel allows. As root
// they use clone(CLONE_NEWPID) and a private mount namespace, in which
// the namespace gets its own /proc; otherwise a user namespace that maps
// only the current user and group, where /proc stays the host's.
//
// No process can leave a PID namespace, and when its first process ends
// the kernel kills the others. That first process is a small init written
// in bash (harness-init in ps), which reaps orphans as PID 1 must. Beside
// it a `sleep` named harness-exit-holder keeps the command's exit status
// until the tools have read it. Inside a namespace, pids are the
// namespace's own: a command cannot signal another command or job, and
// the tool descriptions tell the model to stop jobs with bash_kill.
//
// Under [Bubblewrap], whose bwrap makes a PID namespace and an init of
// its own that end every process of the sandbox when the command ends,
// the sandbox's command line is itself the first process of a PID
// namespace of the tools' (it sets the limits, then runs bwrap), without
// that init and holder, whichever containment the other commands get.
// Since that namespace and the shell that sets the limits depend on
// nothing of the command, the bash tool starts them for a session's next
// one-shot command once a command is over: the next command hands the
// waiting shell bwrap's command line, its masks made when it starts as
// for any command, and does not wait for them. Such a spare is used once;
// one that is not used ends when the session closes, or after 30 seconds.
//
// A stop sends SIGTERM to every process of the command, waits up to the
// grace period, then ends the rest with SIGKILL: in a cgroup through
// cgroup.kill, which reaches every process of it at once; in a PID
// namespace by killing its init, which ends the rest.
//
// Where neither can be made (no privilege, user namespaces disabled,
// seccomp), the tools follow the command's process tree instead: its
// descendants, through /proc, and every process whose environment
// carries the command's marker (HARNESS_SHELL_SCOPE), which finds
// processes that double-forked away. A process that leaves the tree and
// clears its environment cannot be found; results then say "all that
// could be found". The host process is not made a child subreaper: the
// setting is process-wide and would hand the tools orphans of programs
// they did not start. On other Unix-like systems only the process group
// is followed.
//
// Results that report a stop, and those of shell_open and of starting a
// job, end with a line such as "[containment: cgroup]", "[containment:
// pid namespace]" or "[containment: process tree (no pid namespace:
// operation not permitted)]". The session log records the containment of
// each shell.
//
// A cgroup does not hold a process that writes itself into another
// cgroup's cgroup.procs, which takes the rights to that file: as root, an
// unsandboxed command can, as it can ask a daemon to start anything.
// Nothing machine-wide is changed beyond the commands' cgroups: no
// sysctl, no controller settings, no mount outside the namespaces the
// tools create.
//
// # Sandbox
//
// Permission rules decide when to ask; they are not a boundary (an
// interpreter, make or go test -exec runs anything). The sandbox is the
// boundary, and it enforces the same rules as the file tools. Without one
// (Config.Sandbox nil) commands run unconfined, and the log says so.
//
// [Bubblewrap] confines commands on Linux with bubblewrap (bwrap):
//
//   - The root file system is read-only; the workspace is writable unless
//     BubblewrapConfig.ReadOnly.
//   - /dev, /dev/shm, /proc and /tmp are the sandbox's own; /tmp and
//     /dev/shm hold BubblewrapConfig.TmpSize bytes (2 GiB by default), so
//     a disk filler stops there. HOME is a private directory on /tmp.
//   - /home, /root, the host's HOME, /run (and /var/run), /var/tmp,
//     /media and /mnt are hidden. Readable and Writable bring back what
//     the host names (a module cache, a socket).
//   - Every unix socket listening in the host's network namespace that a
//     command could see gets an empty file over it, since a read-only
//     mount does not stop connect(2). Abstract unix sockets belong to a
//     network namespace: with the network off (the default) the command
//     has its own, with it on it shares the host's.
//
// BubblewrapConfig.Paths carries the path policy of the permission rules
// (permission.Policy.Paths), the one the file tools obey below every call
// (fs.Restrict). A path it denies for reading is masked: an empty
// read-only file over a file, an empty read-only directory over a
// directory, the target of a denied symbolic link. A path it denies for
// changing is bound read-only. Ask rules count as deny, since no one can
// be asked inside a command. The directories between the workspace and
// each masked or protected path become mount points, which cannot be
// renamed: `mv secrets-parent elsewhere` cannot carry a secret to a name
// the rules do not cover. A path denied by its name alone (a pattern
// without a slash, such as .env) is denied wherever a rename carries it
// in the workspace; the directories above it are left as they are (the
// file itself is still a mount point), which spares a mount per directory.
//
// Listing what the rules deny walks the trees they name. The policy keeps
// each directory's listing between commands and uses it only while the
// directory's times, inode and device prove it unchanged (see
// permission.Paths); after each command, while the model answers, the
// walk is made once in the background, so the next command's start
// checks each directory with one lstat rather than listing it.
//
// Patterns are matched against what exists when a command starts. Each
// one-shot command and job gets masks made then (the walk covers the
// trees the rules name, and the whole workspace for a pattern without a
// slash such as .env). A persistent shell keeps the masks it got when it
// opened: a file that comes to match a rule later is not masked in a
// shell already open.
//
// As root too, a command runs in a user namespace of its own with every
// capability dropped and further user namespaces disabled: mount,
// remount, chroot, unshare, raw sockets and ptrace fail. It runs in a PID
// namespace of its own, so no host process can be seen or signalled. A
// command run by root is still root to the files it can see: root-only
// files of the read-only root (/etc/shadow, host keys) stay readable
// unless a Read rule denies them (Read(//etc/shadow)).
//
// BubblewrapConfig.Limits bounds each command: its address space and file
// size (RLIMIT_AS, RLIMIT_FSIZE: 8 GiB each), and its processes against a
// fork bomb. For a user other than root that is RLIMIT_NPROC in a user
// namespace of the command's own, where no other process of the user
// counts. Root is not bound by RLIMIT_NPROC; for root it is the pid_max of
// the command's PID namespace (Linux 6.14 and later keep pid_max per
// namespace). As root on an older kernel, or without a PID namespace,
// nothing bounds the processes, and the sandbox's description (in the
// tool text and the log) says so. The defaults fit a parallel go build
// and go test -race.
//
// When bwrap is missing, Bubblewrap fails with
// harness.CodeSandboxUnavailable; the host chooses to refuse commands or
// run them unconfined. Whether bwrap can make its namespaces is checked
// when the first command starts (a turn that runs none does not pay for
// it); if it cannot, every command fails with that code. The sandbox in force is recorded in
// the session log: by bash once per session, by each shell when it opens.
//
// Landlock and a seccomp filter were considered and are not used.
// Landlock applies to the process that asks for it, so it would need a
// helper started before each command, and it grants access by allow-list,
// which cannot say "this workspace except these paths" without listing
// every sibling of every denied path; bwrap's mounts already do this in
// the kernel for every process of the command. A seccomp filter could
// refuse unix sockets wholesale, which breaks programs that use them
// internally, and cannot see the path a connect names; masking the
// listening sockets is exact.
//
// # Environment
//
// Under a sandbox, a command's environment is built from an allow-list:
// PATH, LANG, LANGUAGE, LC_*, TZ, USER, LOGNAME, HOSTNAME, SHELL, TERM,
// plus Config.PassEnv and Config.Env. It never carries the host's
// credentials.
//
// Without a sandbox, commands get the host's environment minus the
// variables that look like credentials (*_API_KEY, *_KEY, *TOKEN*,
// *SECRET*, *PASSWORD*, *CREDENTIAL*, AWS_*, DATABASE_URL, SSH_AUTH_SOCK,
// ...), unless Config.PassEnv names them.
//
// The tool descriptions say which applies. The session log records the
// names withheld, never their values.
//
// # Working directory
//
// A command starts in the session's directory (tools.Env.Cwd) or in the
// one the call names, relative to it. When the file system maps its paths
// to OS paths (fs.LocalPather), directories outside its root are refused.
// Only the starting directory is confined: the processes can reach
// whatever the OS user can, unless a Sandbox confines them.
//
// # Errors
//
// Failures carry harness codes. Beside the dispatcher's
// (invalid_arguments, timeout, aborted) these are harness.CodeBusy (the
// shell still runs a command), harness.CodeNotFound (no such shell or
// job), harness.CodeSandboxUnavailable, and the codes only this package
// reports: [CodeBadWorkdir], [CodeNoShell], [CodeSandboxDenied],
// [CodeShellBroken], [CodeTooManyShells], [CodeTooManyJobs] and
// [CodeUnsupported]. Match one with errors.Is(err, shell.CodeNoShell) or
// by comparing a result's Code.
//
// # Imports
//
// It imports harness, fs, tools, jobs and internal helpers; nothing of spill,
// session or agent. Every output stream is written through
// internal/spillwriter, the writer the spill policy uses. Containment is
// internal/proctree's, which tools/mcp uses for its stdio servers too.
// The persistent shells live in tools/shell/internal/persistent and share
// the configuration and sandbox through tools/shell/internal/shellkit.
package shell
