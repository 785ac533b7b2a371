package shellkit

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/proctree"
)

// DrainDelay is how long output is still read after a command's process
// group is gone. Only a process that left the group (setsid) and kept the
// output pipe open makes it matter.
const DrainDelay = time.Second

// Start starts argv in dir with stdin from /dev/null, stdout and stderr
// on the given files and extra as descriptors 3 and up, contained as the
// configuration's probe found possible. A sandbox that is its own init
// (InitSandbox) is started as the first process of the PID namespace.
func (c *Config) Start(argv []string, dir string, env []string, stdout, stderr *os.File, extra ...*os.File) (*proctree.Proc, error) {
	return proctree.Start(c.Containment(), proctree.Command{Argv: argv, Dir: dir, Env: env, Stdout: stdout, Stderr: stderr, Extra: extra, Init: c.ownInit()})
}

// StartError turns a failure to start bash into an error for the model.
func StartError(err error) error {
	if errors.Is(err, proctree.ErrPlatform) {
		return &harness.Error{Code: CodeUnsupported, Err: err, Message: "Shell commands cannot run on this platform: the shell tools need a Unix-like system with bash."}
	}
	return &harness.Error{Code: CodeNoShell, Err: err, Message: fmt.Sprintf("bash could not be started: %v.", err)}
}

// Pipes opens n pipes and returns their read ends and their write ends;
// when one cannot be opened it closes those it opened.
func Pipes(n int) (r, w []*os.File, err error) {
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

// InOrder returns what ids name in m: the jobs or shells of a table in
// the order they were started.
func InOrder[T any](ids []string, m map[string]T) []T {
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		out = append(out, m[id])
	}
	return out
}

// StopAll runs stop for every one of items at once, waits for them all,
// and joins what they report.
func StopAll[T any](items []T, stop func(T) error) error {
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, v := range items {
		wg.Go(func() { errs[i] = stop(v) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
