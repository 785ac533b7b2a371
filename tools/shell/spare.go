package shell

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// Spare starts.
//
// Under Bubblewrap, a one-shot command's processes begin with the tools'
// PID namespace and the small shell that sets the command's limits in it
// (limitScript), and only then bwrap. None of that depends on the
// command, so after each command the bash tool starts the next one's in
// advance: a fresh PID namespace whose shell has set the limits and waits
// on descriptor 3 for the rest of its script. The next command, in the
// same session, hands it `exec bwrap ...` (the mounts planned then, as
// for any command) and does not wait for the namespace or the shell to
// start. With the network off, as root, the spare's namespace comes with
// the command's network namespace too (nothing but lo, brought up by the
// tools), which bwrap would otherwise make while the command waits. Then,
// under a path policy, the walk of what it denies is made once in the
// background, so that the next command's plan finds the workspace's
// listings in the policy's cache and checks each directory with one lstat
// instead of listing it (the plan at the start is as current as
// before: every directory is checked then). A spare is used once; one
// that is not used is stopped when the session closes or after
// spareIdle. A command finding no spare (the first of a session, one
// running beside another, or one after a long pause) starts as before.

// spareScript is the spare shell's script: the limits, then the script
// the command sends on descriptor 3. That one closes descriptor 3 and
// execs bwrap, in a brace group so that a script cut short runs nothing;
// an empty one (a spare that is stopped) ends the shell.
const spareScript = limitScript + `. /dev/fd/3`

// spareIdle is how long a spare waits for a command before it is
// stopped: a session that runs no command for that long keeps no process.
const spareIdle = 30 * time.Second

// spareStart bounds how long a command waits to hand its script to a
// spare before it gives the spare up.
const spareStart = 10 * time.Second

// spareKey keys a bash tool's spares in the session's state.
type spareKey struct{ tool *bashTool }

// spares holds a session's spare start for one bash tool.
type spares struct {
	mu     sync.Mutex
	ready  *spare
	making bool
	closed bool
	wg     sync.WaitGroup
	// used counts the commands started from a spare.
	used int
	// idleAfter is spareIdle, shorter in tests.
	idleAfter time.Duration
	// ctx ends the background work when the session closes.
	ctx    context.Context
	cancel context.CancelFunc
}

// spare is a started namespace and limit shell, waiting for its script.
type spare struct {
	p          *proctree.Proc
	script     *os.File // the write end of the shell's descriptor 3
	outR, errR *os.File // the read ends of its stdout and stderr
	env        []string
	idle       *time.Timer // stops the spare when no command took it
	// net: the spare has the command's network namespace (lo up), so
	// bwrap makes none.
	net bool
}

// stop ends a spare that was not used.
func (s *spare) stop() {
	s.script.Close()
	s.p.Stop(0)
	s.outR.Close()
	s.errR.Close()
}

// spareSandbox returns the sandbox whose starts can be made in advance,
// with the containment, or nil.
func (b *bashTool) spareSandbox() (*bubblewrap, *proctree.Containment) {
	bw, ok := b.cfg.Sandbox.(*bubblewrap)
	if !ok || !bw.OwnInit() {
		return nil, nil
	}
	cont := b.cfg.Containment()
	if !bw.outer(cont) {
		return nil, nil
	}
	return bw, cont
}

// refillSpare starts the session's next spare in the background, when
// the sandbox allows one.
func (b *bashTool) refillSpare(env *tools.Env) {
	if bw, cont := b.spareSandbox(); bw != nil {
		if sp := b.sparesOf(env); sp != nil {
			sp.refill(b, bw, cont)
		}
	}
}

// sparesOf returns the session's spares for this tool, or nil without
// session state.
func (b *bashTool) sparesOf(env *tools.Env) *spares {
	if env == nil || env.State == nil {
		return nil
	}
	s, err := tools.LoadState(env.State, spareKey{b}, func() *spares {
		ctx, cancel := context.WithCancel(context.Background())
		return &spares{idleAfter: spareIdle, ctx: ctx, cancel: cancel}
	})
	if err != nil {
		return nil
	}
	return s
}

// take returns the ready spare, if it was started with env, or nil.
func (s *spares) take(env []string) *spare {
	s.mu.Lock()
	sp := s.ready
	s.ready = nil
	s.mu.Unlock()
	if sp == nil {
		return nil
	}
	sp.idle.Stop()
	if !slices.Equal(sp.env, env) || sp.p.Exited() {
		sp.stop()
		return nil
	}
	s.mu.Lock()
	s.used++
	s.mu.Unlock()
	return sp
}

// refill starts a spare in the background, unless one is ready or being
// made, or the session is closing.
func (s *spares) refill(b *bashTool, bw *bubblewrap, cont *proctree.Containment) {
	s.mu.Lock()
	if s.closed || s.ready != nil || s.making {
		s.mu.Unlock()
		return
	}
	s.making = true
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		sp, err := startSpare(b.cfg, bw, cont)
		// While the model thinks, look at what the path policy denies now,
		// so that the next command's plan finds the listings in its walk
		// cache and only checks them (see bubblewrap.warm).
		bw.warm(s.ctx)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.making = false
		if err != nil {
			return
		}
		if s.closed {
			sp.stop()
			return
		}
		s.ready = sp
		sp.idle = time.AfterFunc(s.idleAfter, func() {
			s.mu.Lock()
			mine := s.ready == sp
			if mine {
				s.ready = nil
			}
			s.mu.Unlock()
			if mine {
				sp.stop()
			}
		})
	}()
}

// Close stops the spare that was not used.
func (s *spares) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	s.mu.Lock()
	sp := s.ready
	s.ready = nil
	s.mu.Unlock()
	if sp != nil {
		sp.idle.Stop()
		sp.stop()
	}
	return nil
}

var _ io.Closer = (*spares)(nil)

// startSpare starts a namespace and limit shell that waits for its
// script. With the network off, as root, the namespace comes with a
// network namespace of the command's own, so that bwrap does not make
// one when the command starts.
func startSpare(c *shellkit.Config, bw *bubblewrap, cont *proctree.Containment) (*spare, error) {
	net := !bw.cfg.Network && bw.root && !cont.UserNamespace()
	sp, err := startSpareNet(c, bw, cont, net)
	if err != nil && net {
		sp, err = startSpareNet(c, bw, cont, false)
	}
	return sp, err
}

func startSpareNet(c *shellkit.Config, bw *bubblewrap, cont *proctree.Containment, net bool) (*spare, error) {
	rs, ws, err := shellkit.Pipes(3)
	if err != nil {
		return nil, err
	}
	env := c.Environ()
	argv := bw.limitShell(cont, spareScript)
	p, err := proctree.Start(cont, proctree.Command{Argv: argv, Dir: "/", Env: env, Stdout: ws[0], Stderr: ws[1],
		Extra: []*os.File{rs[2]}, Init: true, NewNet: net})
	for _, f := range ws[:2] {
		f.Close()
	}
	rs[2].Close()
	if err != nil {
		rs[0].Close()
		rs[1].Close()
		ws[2].Close()
		return nil, err
	}
	return &spare{p: p, script: ws[2], outR: rs[0], errR: rs[1], env: env, net: net}, nil
}

// launch hands the spare's shell the script that runs argv (bwrap's
// command line) in place of the shell.
func (s *spare) launch(argv []string) error {
	var script strings.Builder
	// A brace group runs only once it has been read whole: a script cut
	// short runs nothing.
	script.WriteString("{ exec 3<&- && exec")
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return errors.New("an argument holds a NUL byte")
		}
		script.WriteString(" '")
		script.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		script.WriteString("'")
	}
	script.WriteString("; }\n")
	_ = s.script.SetWriteDeadline(time.Now().Add(spareStart))
	_, err := io.WriteString(s.script, script.String())
	if cerr := s.script.Close(); err == nil {
		err = cerr
	}
	return err
}
