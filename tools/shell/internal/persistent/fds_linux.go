package persistent

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/go-harness/harness/internal/proctree"
)

// fdProbe looks at where a shell's stdout and stderr lead from outside
// the shell, through its descriptor directory in /proc, opened once when
// the shell starts. The directory stays bound to that process: once it
// has ended, a look fails rather than see another process that got its
// pid.
//
// It costs the harness two readlinkat(2) calls at the end of a command,
// where two \builtin test calls would cost the shell about a hundred
// bytes of its line, each a read(2), and four stat(2) calls.
type fdProbe struct {
	dir    *os.File
	output string // what a descriptor on the output pipe links to: "pipe:[inode]"
	status string // the same for the status channel
}

// newFDProbe finds the shell among the processes of p: the one whose
// descriptors 18 and 19 are the output pipe and the status channel, as
// the boot line set them. It returns nil when none can be looked at (no
// /proc, or no right to read the shell's descriptors).
func newFDProbe(p *proctree.Proc, out, status *os.File) *fdProbe {
	outLink, ok1 := pipeLink(out)
	statusLink, ok2 := pipeLink(status)
	if !ok1 || !ok2 {
		return nil
	}
	pids := []int{p.Main()}
	for _, m := range p.Members(false) {
		if m.PID != p.Main() {
			pids = append(pids, m.PID)
		}
	}
	for _, pid := range pids {
		dir, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fd")
		if err != nil {
			continue
		}
		f := &fdProbe{dir: dir, output: outLink, status: statusLink}
		if l, ok := f.link(outputFD); ok && l == outLink {
			if l, ok := f.link(markerFD); ok && l == statusLink {
				return f
			}
		}
		dir.Close()
	}
	return nil
}

// pipeLink returns what a /proc descriptor link of the pipe f reads.
func pipeLink(f *os.File) (string, bool) {
	fi, err := f.Stat()
	if err != nil {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return "pipe:[" + strconv.FormatUint(st.Ino, 10) + "]", true
}

// link reads the link of the shell's descriptor fd; "" when the
// descriptor is closed (or the shell has ended). ok is false when it
// cannot be read.
func (f *fdProbe) link(fd int) (string, bool) {
	var buf [128]byte
	rc, err := f.dir.SyscallConn()
	if err != nil {
		return "", false
	}
	n := 0
	if cerr := rc.Control(func(dfd uintptr) {
		n, err = unix.Readlinkat(int(dfd), strconv.Itoa(fd), buf[:])
	}); cerr != nil {
		return "", false
	}
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ESRCH):
		return "", true
	case err != nil:
		return "", false
	}
	// A link that fills the buffer was cut: it names a file, not a pipe.
	return string(buf[:n]), true
}

// leads reports whether the shell's stdout and stderr lead to the
// harness; ok is false when they cannot be looked at.
//
// When the record comes, bash may not have moved its stderr back from
// the status channel, where it put it to print the record: a stderr on
// the status channel is looked at again until it moves, for up to
// restoreWait (a command that sent its stderr there for good waits that
// long; its stderr is then taken to lead here, as what it prints there
// is shown).
func (f *fdProbe) leads() (stdout, stderr, ok bool) {
	l1, ok1 := f.link(1)
	l2, ok2 := f.link(2)
	if l2 == f.status && ok2 {
		deadline := time.Now().Add(restoreWait)
		for pause := time.Duration(0); l2 == f.status && ok2 && time.Now().Before(deadline); pause = min(2*pause+10*time.Microsecond, time.Millisecond) {
			if pause == 0 {
				runtime.Gosched()
			} else {
				time.Sleep(pause)
			}
			l2, ok2 = f.link(2)
		}
	}
	if !ok1 || !ok2 {
		return false, false, false
	}
	return l1 == f.output, l2 == f.output || l2 == f.status, true
}

// restoreWait bounds how long leads waits for bash to move its stderr
// back from the status channel after a record.
const restoreWait = 100 * time.Millisecond

func (f *fdProbe) close() { f.dir.Close() }
