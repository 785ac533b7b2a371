package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/go-harness/harness"
)

var errPlatform = errors.New("shell: the shell tools need a Unix-like system")

// startError turns a failure to start bash into an error for the model.
func startError(err error) error {
	if errors.Is(err, errPlatform) {
		return &harness.Error{Code: CodeUnsupported, Err: err, Message: "Shell commands cannot run on this platform: the shell tools need a Unix-like system with bash."}
	}
	return &harness.Error{Code: CodeNoShell, Err: err, Message: fmt.Sprintf("bash could not be started: %v.", err)}
}

// proc is a started process that leads its own process group.
type proc struct {
	cmd     *exec.Cmd
	pgid    int
	done    chan struct{} // closed when the process has exited and been reaped
	waitErr error
}

// startProc starts argv in dir as the leader of a new process group, with
// stdin from /dev/null, stdout and stderr on the given files and extra
// as descriptors 3 and up.
func startProc(argv []string, dir string, env []string, stdout, stderr *os.File, extra ...*os.File) (*proc, error) {
	if !supported {
		return nil, errPlatform
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, pgid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// settled waits until the process has exited and no process of its group
// is left, or until d has passed, and reports which.
func (p *proc) settled(d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	select {
	case <-p.done:
	case <-deadline.C:
		return false
	}
	for {
		if !groupAlive(p.pgid) {
			return true
		}
		select {
		case <-deadline.C:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop ends the process group: SIGTERM, then SIGKILL if anything of the
// group is still running after grace. It returns the signal that ended
// the group and waits for the leader to be reaped.
func (p *proc) stop(grace time.Duration) string {
	_ = terminateGroup(p.pgid)
	if p.settled(grace) {
		return "SIGTERM"
	}
	_ = killGroup(p.pgid)
	<-p.done
	p.settled(killWait) // SIGKILL is delivered asynchronously
	return "SIGKILL"
}

// killWait bounds the wait for SIGKILLed processes to disappear; only a
// process stuck in the kernel takes longer.
const killWait = 2 * time.Second

// reapGroup stops what the process left running in its group after it
// exited. It reports whether anything was left.
func (p *proc) reapGroup(grace time.Duration) bool {
	<-p.done
	if !groupAlive(p.pgid) {
		return false
	}
	_ = terminateGroup(p.pgid)
	if !p.settled(grace) {
		_ = killGroup(p.pgid)
		p.settled(killWait)
	}
	return true
}

// exitInfo describes how the leader ended: its exit code, or the signal
// that killed it.
func (p *proc) exitInfo() (code *int, signal string) {
	st := p.cmd.ProcessState
	if st == nil {
		return nil, ""
	}
	if c := st.ExitCode(); c >= 0 {
		return &c, ""
	}
	return nil, exitSignal(st)
}
