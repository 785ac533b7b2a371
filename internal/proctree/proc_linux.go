package proctree

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Containment on Linux.
//
// Where the cgroup v2 hierarchy allows it, each command runs in a cgroup
// of its own instead (cgroup_linux.go); a command that is its own init
// (Command.Init) still gets a PID namespace, as described here.
//
// Each command (a one-shot bash, a background job, a persistent shell)
// runs in a PID namespace of its own when the kernel allows it: as root
// through clone(CLONE_NEWPID) with a private mount namespace, so that
// the namespace gets a /proc of its own; otherwise through a user
// namespace that maps only the current user and group
// (CLONE_NEWUSER|CLONE_NEWPID), where the processes keep the host's
// /proc. No process can leave a PID namespace, and when its first
// process (PID 1) ends the kernel kills everything in it, so a stop
// reaches processes that started new sessions or process groups
// (setsid, setpgid, set -m, timeout, daemons).
//
// PID 1 is a small init written in bash (nsInit): PID 1 of a namespace
// ignores the signals it has no handler for, and it inherits every
// orphan, which it must reap. The init starts the command with job
// control on, from a subshell that then turns into `sleep`: that process
// never reaps, so the command's exit status stays readable in /proc as a
// zombie until the tools have read it. The init itself loops in `wait`,
// which reaps orphans. A stop sends SIGTERM to every process in the
// namespace but the init and the holder, SIGKILL to the init after the
// grace period, and waits for the init to be reaped: by then the kernel
// has ended every process of the namespace.
//
// Where no PID namespace can be made (no privilege, user namespaces
// disabled, seccomp), the processes are followed as a tree: the
// descendants of the command, through /proc/PID/task/*/children, and
// every process whose environment carries the command's marker
// (markerVar), which finds processes that double-forked away from the
// tree. A stop signals them one by one. A process that clears its
// environment and leaves the tree is not found; the result text says
// that only the processes found were stopped.
//
// The tools do not make the host process a child subreaper
// (PR_SET_CHILD_SUBREAPER): the setting is process-wide, so it would
// also make the host the parent of orphans of every other program the
// embedding application starts. Those would become zombies unless
// reaped, and reaping children the tools did not start (wait on any
// pid) would take exit statuses away from the rest of the application,
// for instance from os/exec's Wait. The environment marker finds the
// same processes without that.

// markerVar is the environment variable that marks the processes of a
// command when no PID namespace contains them.
const markerVar = "HARNESS_SHELL_SCOPE"

// startWait bounds how long a namespace's init and holder may take to
// start the command.
const startWait = 30 * time.Second

// nsInit is the script of a PID namespace's init, run as
// `bash --noprofile --norc -p -c nsInit harness-init SLEEP MOUNT ARGV...`
// with descriptor 4 open for its report and 5 for the go-ahead. It
// mounts a /proc of the namespace when MOUNT is set and the kernel lets
// it, then, from a subshell (the holder), starts the command with job
// control on, so that it leads a process group of its own and does not
// ignore SIGINT as background jobs otherwise do. The holder reports the
// command's pid and whether /proc is the namespace's own, and becomes
// SLEEP (named harness-exit-holder in ps), which never reaps the
// command. The command waits for the
// go-ahead, which the tools give once the holder is SLEEP: a bash holder
// would reap a command that ended at once. The command keeps the init's
// standard input (0<&0 on both background lists, which bash would
// otherwise point at /dev/null); the init and the holder let go of it.
// The init closes what it does not need and waits forever, reaping
// orphans. -p keeps functions and options in the environment from
// changing the script.
const nsInit = `s=$1 m=$2 p=host; shift 2
[ -n "$m" ] && "$m" -t proc -o nosuid,nodev,noexec proc /proc >/dev/null 2>&1 && p=own
( set -m; { read -r _ <&5; exec 5<&- "$@"; } 4>&- 0<&0 & printf '%s %s\n' "$!" "$p" >&4; exec -a harness-exit-holder "$s" 2147483647 </dev/null >/dev/null 2>&1 3<&- 4>&- 5<&- ) 0<&0 &
exec </dev/null >/dev/null 2>&1 3<&- 4>&- 5<&-
while :; do wait; (exec -a harness-init-wait "$s" 2147483647); done`

// probe finds out which containment works here: a cgroup of each
// command's own, else a PID namespace, else the process tree.
func probe(o Options) *Containment {
	if o.NoNamespace != nil {
		return &Containment{kind: containTree, reason: o.NoNamespace.Error()}
	}
	if !o.NoCgroup {
		if c := probeCgroup(o); c != nil {
			return c
		}
	}
	return probeNamespace(o)
}

// probeCgroup returns the cgroup containment when it works here, or nil.
func probeCgroup(o Options) *Containment {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return nil
	}
	t, err := findCgroupTree()
	if err != nil {
		return nil
	}
	c := &Containment{kind: containCgroup, cg: t, sleep: sleep, nsOpts: o}
	if tryCgroup(c) != nil {
		return nil
	}
	return c
}

// probeNamespace finds out whether a PID namespace can be made, by
// starting a trivial command in one each way that may work.
func probeNamespace(o Options) *Containment {
	ns := &Containment{kind: containNS}
	var err error
	if ns.bash, err = exec.LookPath("bash"); err != nil {
		if ns.bash, err = exec.LookPath(o.Shell); err != nil {
			return &Containment{kind: containTree, reason: "no bash for the namespace's init"}
		}
	}
	if ns.sleep, err = exec.LookPath("sleep"); err != nil {
		return &Containment{kind: containTree, reason: "no sleep for the namespace's init"}
	}
	ns.mount, _ = exec.LookPath("mount")
	var first error
	if os.Geteuid() == 0 {
		if err := tryNamespace(ns); err == nil {
			return ns
		} else {
			first = err
		}
	}
	u := &Containment{kind: containNS, bash: ns.bash, sleep: ns.sleep, userNS: true}
	err = tryNamespace(u)
	if err == nil {
		return u
	}
	if first == nil {
		first = err
	}
	return &Containment{kind: containTree, reason: reasonText(first)}
}

// tryNamespace runs `sleep 0` contained in c and checks that it reports
// a clean exit.
func tryNamespace(c *Containment) error {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	p, err := startNS(c, Command{Argv: []string{c.sleep, "0"}, Dir: "/", Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null})
	if err != nil {
		return err
	}
	<-p.mainDone
	p.Stop(killWait)
	code, sig := p.ExitInfo()
	if code == nil || *code != 0 {
		return fmt.Errorf("the test command ended with %v %q", code, sig)
	}
	return nil
}

// reasonText turns a failure to make a namespace into a few words.
func reasonText(err error) string {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno) && errno == syscall.ENOSPC:
		return "the limit of namespaces is reached or zero"
	case errors.As(err, &errno):
		return errno.Error()
	}
	return err.Error()
}

// startContained starts argv as c says.
func startContained(c *Containment, x Command) (*Proc, error) {
	if x.Init {
		if ns := c.initContainment(); ns.kind == containNS && (!x.NewNet || !ns.userNS) {
			return startInit(ns, x)
		}
	}
	if x.NewNet {
		return nil, ErrNoNewNet
	}
	switch c.kind {
	case containCgroup:
		return startCgroup(c, x)
	case containNS:
		return startNS(c, x)
	}
	return startTree(c, x)
}

// nsAttr is how a namespace's init is started. Its Pdeathsig kills the
// init when the host dies (a crash, SIGKILL), and the kernel then ends
// every process of the namespace: without it, an init whose host died
// waited for ever, and its command with it. (The signal follows the
// death of the host thread that started the init; Go ends a thread only
// when a goroutine exits while locked to it.)
func nsAttr(c *Containment) *syscall.SysProcAttr {
	if !c.userNS {
		// The new mount namespace lets the init mount a /proc of the PID
		// namespace without touching the host's; os/exec makes its
		// mounts private first.
		return &syscall.SysProcAttr{Setsid: true, Cloneflags: syscall.CLONE_NEWPID, Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	}
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Pdeathsig:                  syscall.SIGKILL,
		Setsid:                     true,
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
}

// startInit starts argv as the first process of a new PID namespace: a
// program that is its own init (Command.Init). Its exit ends the
// namespace, and the kernel has ended every other process of it by the
// time the exit can be waited for, so the command's status is its own
// and nothing is left over. As root no mount namespace is needed: the
// program makes what it needs itself.
func startInit(c *Containment, x Command) (*Proc, error) {
	attr := nsAttr(c)
	attr.Unshareflags &^= syscall.CLONE_NEWNS
	if x.NewNet {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	cmd := &exec.Cmd{Path: x.Argv[0], Args: x.Argv, Dir: x.Dir, Env: x.Env, Stdin: stdinOf(x), Stdout: writer(x.Stdout), Stderr: writer(x.Stderr), ExtraFiles: x.Extra, SysProcAttr: attr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if x.NewNet {
		// Not yet waited for, the process keeps its pid until it is.
		if err := loopbackUp(cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("proctree: bringing up the loopback device of the command's network namespace: %w", err)
		}
	}
	p := &Proc{cmd: cmd, cont: c, how: c.String(), init: cmd.Process.Pid, main: cmd.Process.Pid, mainDone: make(chan struct{}), gone: make(chan struct{})}
	p.pidNS = nsOf(p.init)
	go p.waitMain()
	return p, nil
}

// startNS starts argv under an init in a new PID namespace.
func startNS(c *Containment, x Command) (*Proc, error) {
	if len(x.Extra) > 1 { // descriptors 4 and 5 belong to the init
		return nil, errors.New("proctree: at most one extra descriptor in a PID namespace")
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		repR.Close()
		repW.Close()
		return nil, err
	}
	defer goW.Close()
	files := []*os.File{nil, repW, goR}
	if len(x.Extra) == 1 {
		files[0] = x.Extra[0]
	}
	// The command inherits the init's standard input; the init and the
	// holder let go of theirs.
	args := append([]string{"harness-init", "--noprofile", "--norc", "-p", "-c", nsInit, "harness-init", c.sleep, c.mount}, x.Argv...)
	cmd := &exec.Cmd{Path: c.bash, Args: args, Dir: x.Dir, Env: x.Env, Stdin: stdinOf(x), Stdout: writer(x.Stdout), Stderr: writer(x.Stderr), ExtraFiles: files, SysProcAttr: nsAttr(c)}
	err = cmd.Start()
	repW.Close()
	goR.Close()
	if err != nil {
		repR.Close()
		return nil, err
	}
	p := &Proc{cmd: cmd, cont: c, init: cmd.Process.Pid, mainDone: make(chan struct{}), gone: make(chan struct{})}
	p.pidNS = nsOf(p.init)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.gone)
	}()
	fail := func(err error) (*Proc, error) {
		_ = signalPID(p.init, syscall.SIGKILL)
		<-p.gone
		close(p.mainDone)
		return nil, err
	}
	_ = repR.SetReadDeadline(time.Now().Add(startWait))
	line, err := bufio.NewReader(repR).ReadString('\n')
	repR.Close()
	if err != nil {
		return fail(fmt.Errorf("the namespace's init did not start the command: %w", err))
	}
	nsPID, ownProc, err := parseReport(line)
	if err != nil {
		return fail(err)
	}
	if err := p.findMain(nsPID); err != nil {
		return fail(err)
	}
	if err := p.awaitHolder(filepath.Base(c.sleep)); err != nil {
		return fail(err)
	}
	st, _ := readStat(p.main)
	if _, err := goW.WriteString("\n"); err != nil {
		return fail(fmt.Errorf("the command did not wait for its start: %w", err))
	}
	p.how = c.String()
	if !ownProc {
		p.how += "; /proc shows the host's pids"
	}
	go p.watchMain(st.start)
	return p, nil
}

// awaitHolder waits until the holder runs sleep (its comm is name), so
// that it cannot reap the command any more.
func (p *Proc) awaitHolder(name string) error {
	if len(name) > 15 {
		name = name[:15] // the kernel keeps 15 bytes of a command name
	}
	deadline := time.Now().Add(startWait)
	for {
		st, ok := readStat(p.holder)
		switch {
		case !ok || !st.live():
			return errors.New("proctree: the namespace's holder ended")
		case st.comm == name:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("proctree: the namespace's holder did not start %s", name)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// parseReport parses the holder's report: the command's pid in the
// namespace, and "own" or "host" for the /proc it sees.
func parseReport(line string) (nsPID int, ownProc bool, err error) {
	f := strings.Fields(line)
	if len(f) == 2 && strings.HasSuffix(line, "\n") {
		n, err := strconv.Atoi(f[0])
		if err == nil && n > 1 && (f[1] == "own" || f[1] == "host") {
			return n, f[1] == "own", nil
		}
	}
	return 0, false, fmt.Errorf("proctree: the namespace's init reported %q", line)
}

// findMain finds the host pids of the holder (a child of the init) and
// of the command (the holder's child, nsPID inside the namespace).
func (p *Proc) findMain(nsPID int) error {
	kids, err := children(p.init)
	if err != nil {
		return err
	}
	for _, x := range kids {
		grand, _ := children(x)
		for _, g := range grand {
			if innerPID(g) == nsPID {
				p.holder, p.main = x, g
				return nil
			}
		}
	}
	return fmt.Errorf("proctree: the command (pid %d in its namespace) was not found", nsPID)
}

// watchMain waits for the command's process to end and reads its exit
// status from the zombie the holder keeps.
func (p *Proc) watchMain(start uint64) {
	defer close(p.mainDone)
	ended := func() bool {
		st, ok := readStat(p.main)
		return !ok || st.start != start || st.state == 'Z' || st.state == 'X'
	}
	waitExit(p.main, ended, p.gone)
	if st, ok := readStat(p.main); ok && st.start == start && st.state == 'Z' {
		p.setExit(syscall.WaitStatus(st.exit))
		return
	}
	// The status is gone with the process: the namespace ended while it
	// ran (its init was killed, which SIGKILLs everything in it), or the
	// holder was killed and the init reaped the command.
	select {
	case <-p.gone:
		p.signal = "SIGKILL"
	default:
	}
}

// waitExit returns once ended reports true, woken by a pidfd of pid when
// the kernel has them, else polling; it also returns when stop closes.
func waitExit(pid int, ended func() bool, stop <-chan struct{}) {
	if ended() {
		return
	}
	if fd, err := pidfdOpen(pid); err == nil {
		if err := syscall.SetNonblock(fd, true); err != nil {
			syscall.Close(fd)
		} else {
			f := os.NewFile(uintptr(fd), "pidfd")
			defer f.Close()
			if rc, err := f.SyscallConn(); err == nil {
				// The pidfd turns readable when the process exits; a
				// callback returning false waits for that.
				if rc.Read(func(uintptr) bool { return ended() }) == nil {
					return
				}
			}
		}
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !ended() {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// sysPidfdOpen is pidfd_open(2), the same number on every architecture
// Go supports (Linux 5.3 and later).
const sysPidfdOpen = 434

func pidfdOpen(pid int) (int, error) {
	fd, _, e := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// startTree starts argv as the leader of a new session, with a marker in
// its environment, and follows its descendants.
func startTree(c *Containment, x Command) (*Proc, error) {
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	marker := markerVar + "=" + hex.EncodeToString(nonce[:])
	cmd := &exec.Cmd{Path: x.Argv[0], Args: x.Argv, Dir: x.Dir, Env: append(x.Env[:len(x.Env):len(x.Env)], marker),
		Stdin: stdinOf(x), Stdout: writer(x.Stdout), Stderr: writer(x.Stderr), ExtraFiles: x.Extra, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, cont: c, how: c.String(), main: cmd.Process.Pid, marker: marker,
		mainDone: make(chan struct{}), gone: make(chan struct{}), known: map[int]uint64{}}
	if st, ok := readStat(p.main); ok {
		p.known[p.main] = st.start
	}
	go p.waitMain()
	return p, nil
}

// Members returns the live processes of the command, the tools' init
// and holder left out. full also searches all of /proc for the marker
// (the process tree only; it costs a read of every process's
// environment).
//
// In a PID namespace the cheap look walks the init's descendants; the
// full one also scans /proc for every process of the namespace, which
// the walk can miss while an orphan moves to the init.
func (p *Proc) Members(full bool) []Member {
	if p.cgroup != "" {
		return p.cgMembers()
	}
	if p.cont.kind == containNS {
		return p.nsMembers(full)
	}
	return p.treeMembers(full)
}

func (p *Proc) nsMembers(full bool) []Member {
	if p.main == p.init {
		// A command that is its own init: once it has been reaped, the
		// kernel has ended every other process of its namespace (the
		// init's exit waits for them), so there is nothing to look for.
		select {
		case <-p.gone:
			return nil
		default:
		}
	}
	pids := descendants([]int{p.init})
	if full && p.pidNS != "" {
		if all, err := allPIDs(); err == nil {
			for _, pid := range all {
				if pid != p.init && nsOf(pid) == p.pidNS {
					pids = append(pids, pid)
				}
			}
		}
	}
	var out []Member
	seen := map[int]bool{}
	for _, pid := range pids {
		if pid == p.holder || seen[pid] {
			continue
		}
		seen[pid] = true
		if st, ok := readStat(pid); ok && st.live() {
			out = append(out, Member{PID: pid, Start: st.start, Name: st.comm})
		}
	}
	return out
}

// nsOf names the PID namespace of pid ("pid:[4026532001]"), or "".
func nsOf(pid int) string {
	s, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return ""
	}
	return s
}

func (p *Proc) treeMembers(full bool) []Member {
	p.knownM.Lock()
	defer p.knownM.Unlock()
	var roots []int
	for pid, start := range p.known {
		if st, ok := readStat(pid); ok && st.start == start && st.live() {
			roots = append(roots, pid)
		} else {
			delete(p.known, pid)
		}
	}
	if full {
		roots = append(roots, markedProcesses(p.marker)...)
	}
	var out []Member
	seen := map[int]bool{}
	for _, pid := range append(roots, descendants(roots)...) {
		if seen[pid] {
			continue
		}
		seen[pid] = true
		st, ok := readStat(pid)
		if !ok || !st.live() {
			continue
		}
		if start, known := p.known[pid]; known && start != st.start {
			continue
		}
		p.known[pid] = st.start
		out = append(out, Member{PID: pid, Start: st.start, Name: st.comm})
	}
	return out
}

// terminate sends SIGTERM to each member still running as it was found.
func (p *Proc) terminate(ms []Member) { signalMembers(ms, syscall.SIGTERM) }

func signalMembers(ms []Member, sig syscall.Signal) {
	for _, m := range ms {
		if st, ok := readStat(m.PID); ok && st.start == m.Start {
			_ = signalPID(m.PID, sig)
		}
	}
}

// finish ends whatever is left of the command and waits for it to go: in
// a PID namespace, SIGKILL to the init; in a process tree, SIGKILL to
// every member until none is found. It returns what still runs after
// killWait.
func (p *Proc) finish() []Member {
	if p.cgroup != "" {
		return p.cgFinish()
	}
	deadline := time.NewTimer(killWait)
	defer deadline.Stop()
	if p.cont.kind == containNS {
		_ = signalPID(p.init, syscall.SIGKILL)
		select {
		case <-p.gone:
		case <-deadline.C:
			return p.nsMembers(true)
		}
		<-p.mainDone
		return nil
	}
	for {
		ms := p.treeMembers(true)
		if len(ms) == 0 {
			break
		}
		signalMembers(ms, syscall.SIGKILL)
		select {
		case <-deadline.C:
			return p.treeMembers(true)
		case <-time.After(10 * time.Millisecond):
		}
	}
	select {
	case <-p.gone:
	case <-deadline.C:
	}
	return nil
}

// procStat is what the tools read of /proc/PID/stat.
type procStat struct {
	state byte
	ppid  int
	start uint64
	comm  string
	exit  int // the wait status of a zombie (Linux 3.5 and later)
}

func (s procStat) live() bool { return s.state != 'Z' && s.state != 'X' }

// readStat reads /proc/PID/stat.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(b)
}

// parseStat parses the text of /proc/PID/stat.
func parseStat(b []byte) (procStat, bool) {
	// "pid (comm) state ppid ...": comm may hold spaces and parens.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	s := procStat{state: f[0][0], comm: string(b[open+1 : end])}
	s.ppid, _ = strconv.Atoi(string(f[1]))
	s.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	if len(f) > 49 {
		s.exit, _ = strconv.Atoi(string(f[49]))
	}
	return s, true
}

// innerPID returns the pid of a process in its innermost PID namespace,
// from the NSpid line of /proc/PID/status, or 0.
func innerPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return parseNSpid(string(b))
}

// parseNSpid returns the last pid of the NSpid line of a
// /proc/PID/status text, or 0.
func parseNSpid(status string) int {
	for line := range strings.Lines(status) {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			n, err := strconv.Atoi(f[len(f)-1])
			if err != nil || n < 0 {
				return 0
			}
			return n
		}
	}
	return 0
}

// children lists the children of pid, from the children lists of its
// threads, or from the parent pids of all processes when the kernel
// does not keep those lists.
func children(pid int) ([]int, error) {
	base := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(base)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(base + t.Name() + "/children")
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(base + t.Name()); serr == nil {
				return childrenByScan(pid)
			}
			continue
		}
		for _, f := range bytes.Fields(b) {
			if n, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func childrenByScan(pid int) ([]int, error) {
	pids, err := allPIDs()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range pids {
		if st, ok := readStat(n); ok && st.ppid == pid {
			out = append(out, n)
		}
	}
	return out, nil
}

// descendants returns every descendant of the roots (the roots left
// out), breadth first.
func descendants(roots []int) []int {
	var out []int
	seen := map[int]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		kids, _ := children(pid)
		for _, k := range kids {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
				queue = append(queue, k)
			}
		}
	}
	return out
}

func allPIDs() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// markedProcesses lists the processes whose environment holds marker
// ("NAME=value"). Processes of other users are skipped unless the host
// may read them.
func markedProcesses(marker string) []int {
	pids, err := allPIDs()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	want := []byte(marker + "\x00")
	var out []int
	for _, pid := range pids {
		if pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		if bytes.HasPrefix(b, want) || bytes.Contains(b, append([]byte{0}, want...)) {
			out = append(out, pid)
		}
	}
	return out
}
