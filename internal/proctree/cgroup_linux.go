package proctree

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Containment in a cgroup (Linux, cgroup v2).
//
// Where the process may create cgroups below its own in the cgroup v2
// hierarchy (as root, or where the hierarchy is delegated to its user)
// and the kernel has cgroup.kill (Linux 5.14) and clone3 with
// CLONE_INTO_CGROUP (Linux 5.7), each command starts in a fresh cgroup
// of its own: the kernel puts the child there as it creates it, so no
// process of the command runs anywhere else. Every process it starts
// stays in that cgroup, whatever it does to its session, process group
// or parent; only a write to another cgroup's cgroup.procs moves it,
// which needs the rights to that file (a deliberate act, like asking a
// daemon to start something). The command's shell is the tools' own
// child, so its exit status is read with wait, and nothing but the
// command itself is started: no init, no holder, no handshake.
//
// A stop sends SIGTERM to every process the cgroup (and any cgroup the
// command made below it) lists, waits up to the grace period, then
// writes 1 to cgroup.kill, which SIGKILLs every process of the subtree
// at once, and waits until the cgroup is empty. The cgroup is removed
// when its command is over.
//
// The cgroups are named harness-PID-N, PID the host process's. One left
// by a host process that died is an empty directory; the kernel frees it
// when it is removed, which the next probe does (sweepStale).

// cgroupTree is where the tools make a cgroup for each command.
type cgroupTree struct {
	parent string // the host process's own cgroup directory
	prefix string // harness-PID-
	seq    atomic.Uint64
}

// findCgroupTree returns the host process's cgroup v2 directory, from
// /proc/self/mountinfo (where cgroup2 is mounted) and /proc/self/cgroup
// (the process's path in it).
func findCgroupTree() (*cgroupTree, error) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	mnt, root, ok := cgroup2Mount(mounts)
	if !ok {
		return nil, errors.New("no cgroup v2 hierarchy is mounted")
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	path, ok := cgroup2Path(self)
	if !ok {
		return nil, errors.New("the process is in no cgroup v2 cgroup")
	}
	// The mount may show a subtree (a container's); the path is then
	// below its root.
	rel, ok := strings.CutPrefix(path, root)
	if !ok || (rel != "" && !strings.HasPrefix(rel, "/") && root != "/") {
		return nil, fmt.Errorf("the process's cgroup %s is outside the mounted hierarchy", path)
	}
	dir := filepath.Join(mnt, rel)
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return nil, err
	}
	sweepStale(dir)
	return &cgroupTree{parent: dir, prefix: "harness-" + strconv.Itoa(os.Getpid()) + "-"}, nil
}

// sweepStale removes the cgroups under dir that host processes which no
// longer run left behind (a crash between a command's start and its
// end). Only empty cgroups can be removed, so one whose commands outlived
// their host stays, as does any cgroup of a live process.
func sweepStale(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "harness-")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + pidText); !errors.Is(err, os.ErrNotExist) {
			continue // alive, or cannot tell
		}
		removeCgroup(filepath.Join(dir, e.Name()))
	}
}

// cgroup2Mount finds the first cgroup2 mount in a mountinfo text: its
// mount point and the root of the hierarchy it shows.
func cgroup2Mount(mountinfo []byte) (mountPoint, root string, ok bool) {
	for line := range bytes.Lines(mountinfo) {
		// "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER"
		pre, post, found := bytes.Cut(line, []byte(" - "))
		if !found {
			continue
		}
		fsType, _, _ := bytes.Cut(post, []byte(" "))
		if string(fsType) != "cgroup2" {
			continue
		}
		f := strings.Fields(string(pre))
		if len(f) < 5 {
			continue
		}
		return unescapeMount(f[4]), unescapeMount(f[3]), true
	}
	return "", "", false
}

// unescapeMount undoes the octal escapes (\040 for a space) of a
// mountinfo field.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroup2Path returns the path of the cgroup v2 line ("0::/path") of a
// /proc/PID/cgroup text.
func cgroup2Path(text []byte) (string, bool) {
	for line := range bytes.Lines(text) {
		if rest, ok := bytes.CutPrefix(line, []byte("0::")); ok {
			p := string(bytes.TrimRight(rest, "\n"))
			if strings.HasPrefix(p, "/") && !strings.Contains(p, " (deleted)") {
				return p, true
			}
		}
	}
	return "", false
}

// make creates a fresh cgroup for a command and opens it for
// CLONE_INTO_CGROUP.
func (t *cgroupTree) make() (dir string, fd int, err error) {
	for range 100 {
		dir = filepath.Join(t.parent, t.prefix+strconv.FormatUint(t.seq.Add(1), 10))
		err = os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrExist) {
			continue // left by an earlier process with this pid
		}
		if err != nil {
			return "", -1, err
		}
		fd, err = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			_ = os.Remove(dir)
			return "", -1, err
		}
		return dir, fd, nil
	}
	return "", -1, err
}

// tryCgroup runs `sleep 0` in a cgroup of t and checks that cgroup.kill
// is there and that the cgroup can be removed afterwards.
func tryCgroup(c *Containment) error {
	dir, fd, err := c.cg.make()
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	defer removeCgroup(dir)
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		return errors.New("the kernel has no cgroup.kill")
	}
	cmd := exec.Command(c.sleep, "0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Run(); err != nil {
		return err
	}
	if populated(dir) {
		return errors.New("the test command's cgroup stayed populated")
	}
	return nil
}

// startCgroup starts x in a cgroup of its own.
func startCgroup(c *Containment, x Command) (*Proc, error) {
	dir, fd, err := c.cg.make()
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	cmd := &exec.Cmd{Path: x.Argv[0], Args: x.Argv, Dir: x.Dir, Env: x.Env, Stdin: stdinOf(x), Stdout: writer(x.Stdout), Stderr: writer(x.Stderr),
		ExtraFiles: x.Extra, SysProcAttr: &syscall.SysProcAttr{Setsid: true, UseCgroupFD: true, CgroupFD: fd}}
	if err := cmd.Start(); err != nil {
		removeCgroup(dir)
		return nil, err
	}
	p := &Proc{cmd: cmd, cont: c, how: c.String(), main: cmd.Process.Pid, cgroup: dir,
		mainDone: make(chan struct{}), gone: make(chan struct{})}
	go p.waitMain()
	return p, nil
}

// populated reports whether a process of the cgroup at dir, or of one
// below it, has not exited; a cgroup that cannot be read counts as
// populated.
func populated(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("populated ")); ok {
			return !bytes.Equal(bytes.TrimSpace(v), []byte("0"))
		}
	}
	return true
}

// cgroupPIDs lists the processes of the cgroup at dir and of the
// cgroups below it.
func cgroupPIDs(dir string) []int {
	var out []int
	if f, err := os.Open(filepath.Join(dir, "cgroup.procs")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if n, err := strconv.Atoi(sc.Text()); err == nil {
				out = append(out, n)
			}
		}
		f.Close()
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, cgroupPIDs(filepath.Join(dir, e.Name()))...)
		}
	}
	return out
}

// cgMembers returns the live processes of the command's cgroup.
func (p *Proc) cgMembers() []Member {
	if !populated(p.cgroup) {
		return nil
	}
	var out []Member
	for _, pid := range cgroupPIDs(p.cgroup) {
		if st, ok := readStat(pid); ok && st.live() {
			out = append(out, Member{PID: pid, Start: st.start, Name: st.comm})
		}
	}
	return out
}

// cgFinish kills what is left in the cgroup (cgroup.kill), waits for it
// to empty and for the main process to be reaped, and removes it. It
// returns what still runs after killWait.
func (p *Proc) cgFinish() []Member {
	deadline := time.Now().Add(killWait)
	if populated(p.cgroup) {
		_ = os.WriteFile(filepath.Join(p.cgroup, "cgroup.kill"), []byte("1"), 0)
		for populated(p.cgroup) {
			if time.Now().After(deadline) {
				return p.cgMembers()
			}
			time.Sleep(time.Millisecond)
		}
	}
	select {
	case <-p.gone:
	case <-time.After(time.Until(deadline)):
	}
	removeCgroup(p.cgroup)
	return nil
}

// removeCgroup removes the cgroup at dir and those a command made below
// it, deepest first. Only empty cgroups can be removed; what fails
// stays.
func removeCgroup(dir string) {
	if err := syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			removeCgroup(filepath.Join(dir, e.Name()))
		}
	}
	_ = syscall.Rmdir(dir)
}
