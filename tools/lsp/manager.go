package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/internal/secretenv"
)

// Manager runs language servers for the workspaces its calls touch and
// adds the diagnostics a change introduced to the results of write and
// edit ([Manager.Middleware]). A server starts on the first call that
// needs it, is reused by later calls, is started again when it crashed
// or stopped answering (at most MaxRestarts times), and is shut down by
// Close. It is safe for concurrent use.
type Manager struct {
	o options

	mu      sync.Mutex
	entries map[entryKey]*entry
	closed  bool
	cont    *proctree.Containment

	// ctx ends when the manager closes; background warm-ups use it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type entryKey struct{ server, root string }

// entry is one server for one workspace.
type entry struct {
	srv  *Server
	root string
	// sem (a lock that a waiter can give up on) serializes starts and
	// the check-change-check sequence of a call, so that two calls'
	// changes do not mix in one delta.
	sem      chan struct{}
	c        *client
	restarts int
	// failed, once set, is why the server is not used for the
	// workspace any more; missing reports that it is not installed.
	failed  error
	missing bool
	// told reports that a call's result said the server is unavailable
	// (once is enough).
	told bool
}

// lock takes the entry's lock, waiting at most until ctx ends.
func (e *entry) lock(ctx context.Context) bool {
	select {
	case e.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// tryLock takes the entry's lock if it is free.
func (e *entry) tryLock() bool {
	select {
	case e.sem <- struct{}{}:
		return true
	default:
		return false
	}
}

func (e *entry) unlock() { <-e.sem }

// New returns a Manager. An invalid field of cfg is an error matching
// harness.CodeInvalidOption.
func New(cfg Config) (*Manager, error) {
	o, err := optionsOf(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{o: o, entries: map[entryKey]*entry{}, ctx: ctx, cancel: cancel}, nil
}

// Close shuts every server down (shutdown and exit, then SIGTERM and
// SIGKILL to what is left of each) and waits for them to end. Later
// calls pass through without diagnostics.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	entries := m.entries
	m.entries = map[entryKey]*entry{}
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.sem <- struct{}{}
			defer e.unlock()
			if e.c != nil {
				e.c.shutdown()
				e.c = nil
			}
			e.failed = errors.New("the manager is closed")
		}()
	}
	wg.Wait()
	return nil
}

// entryFor returns the entry of a server and workspace, or nil once the
// manager is closed.
func (m *Manager) entryFor(srv *Server, root string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	k := entryKey{srv.Name, root}
	e := m.entries[k]
	if e == nil {
		e = &entry{srv: srv, root: root, sem: make(chan struct{}, 1)}
		m.entries[k] = e
	}
	return e
}

// containment probes, once, how server processes are contained.
func (m *Manager) containment() *proctree.Containment {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cont == nil {
		m.cont = proctree.Probe(proctree.Options{})
	}
	return m.cont
}

// clientLocked returns the entry's running server, starting it (again)
// when there is none, it crashed, or it stopped answering. The entry's
// lock is held.
func (m *Manager) clientLocked(ctx context.Context, e *entry) (*client, error) {
	if e.failed != nil {
		return nil, e.failed
	}
	if e.c != nil && e.c.alive() && !e.c.hung() {
		return e.c, nil
	}
	if e.c != nil {
		why := "crashed"
		if e.c.alive() {
			why = "stopped answering"
		}
		m.o.logger.Warn("restarting a language server", "server", e.srv.Name, "workspace", e.root, "reason", why)
		e.c.kill()
		e.c = nil
		e.restarts++
		if e.restarts > m.o.maxRestarts {
			e.failed = fmt.Errorf("%s %s %d times; it is not used for this workspace any more", e.srv.Name, why, e.restarts)
			return nil, e.failed
		}
	}
	argv, err := resolveCommand(e.srv.Command, e.root)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			e.missing = true
		}
		e.failed = err
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, m.o.startWait)
	defer cancel()
	c, err := start(sctx, &m.o, m.containment(), e.srv, argv, m.environment(), e.root)
	if err != nil {
		e.restarts++
		if e.restarts > m.o.maxRestarts {
			e.failed = fmt.Errorf("%s failed to start %d times: %w", e.srv.Name, e.restarts, err)
		}
		return nil, err
	}
	e.c = c
	return c, nil
}

// resolveCommand finds a server's program: an absolute path as it is,
// a bare name on PATH. A program inside the workspace (directly, or
// through a symbolic link) is refused: what the agent can write must
// not be what the harness runs.
func resolveCommand(command []string, root string) ([]string, error) {
	name := command[0]
	if !filepath.IsAbs(name) && strings.ContainsRune(name, filepath.Separator) {
		return nil, fmt.Errorf("the server command %q is a relative path: name a program on PATH or an absolute path", name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s is not installed (not found on PATH): %w", name, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	roots := []string{root}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		roots = append(roots, r)
	}
	for _, r := range roots {
		for _, x := range []string{abs, real} {
			if within(x, r) {
				return nil, fmt.Errorf("%s resolves to %s, inside the workspace: programs from the workspace are never run as language servers", name, x)
			}
		}
	}
	return append([]string{real}, command[1:]...), nil
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// environment is what a server runs with: this process's environment
// without what looks like a credential (unless passed by name), plus
// Config.Env.
func (m *Manager) environment() []string {
	env := secretenv.Filter(os.Environ(), m.o.passEnv)
	return append(env, m.o.env...)
}
