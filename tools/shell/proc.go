package shell

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/proctree"
)

// containment is how the tools contain what they start (see
// internal/proctree, which the MCP servers' processes share).
type containment = proctree.Containment

// containment returns how commands are contained, probing the first time.
func (c *config) containment() *containment {
	c.probe.Do(func() { c.cont = proctree.Probe(proctree.Options{Shell: c.shell, NoNamespace: c.noNamespace}) })
	return c.cont
}

// withoutNamespace keeps commands out of PID namespaces, giving reason
// as the cause; for tests of the other containment.
func withoutNamespace(reason string) Option {
	return func(c *config) { c.noNamespace = errors.New(reason) }
}

// startProc starts argv in dir with stdin from /dev/null, stdout and
// stderr on the given files and extra as descriptors 3 and up, contained
// as the configuration's probe found possible.
func startProc(c *config, argv []string, dir string, env []string, stdout, stderr *os.File, extra ...*os.File) (*proctree.Proc, error) {
	return proctree.Start(c.containment(), proctree.Command{Argv: argv, Dir: dir, Env: env, Stdout: stdout, Stderr: stderr, Extra: extra})
}

// startError turns a failure to start bash into an error for the model.
func startError(err error) error {
	if errors.Is(err, proctree.ErrPlatform) {
		return &harness.Error{Code: codeUnsupported, Err: err, Message: "Shell commands cannot run on this platform: the shell tools need a Unix-like system with bash."}
	}
	return &harness.Error{Code: codeNoShell, Err: err, Message: fmt.Sprintf("bash could not be started: %v.", err)}
}

// pipes opens n pipes and returns their read ends and their write ends;
// when one cannot be opened it closes those it opened.
func pipes(n int) (r, w []*os.File, err error) {
	r, w = make([]*os.File, n), make([]*os.File, n)
	for i := range n {
		if r[i], w[i], err = os.Pipe(); err != nil {
			for j := range i {
				r[j].Close()
				w[j].Close()
			}
			return nil, nil, err
		}
	}
	return r, w, nil
}

// inOrder returns what ids name in m: the jobs or shells of a table in
// the order they were started.
func inOrder[T any](ids []string, m map[string]T) []T {
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		out = append(out, m[id])
	}
	return out
}

// stopAll runs stop for every one of items at once, waits for them all,
// and joins what they report.
func stopAll[T any](items []T, stop func(T) error) error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, v := range items {
		wg.Go(func() { errs[i] = stop(v) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
