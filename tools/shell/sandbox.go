package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// BubblewrapConfig configures the bubblewrap sandbox.
type BubblewrapConfig struct {
	// ReadOnly keeps the workspace read-only too, so that commands can
	// change nothing but a private temporary directory and Writable.
	// Without it commands may write in the workspace, and the rest is
	// read-only.
	ReadOnly bool
	// Workspace is the OS directory commands may write in (they may read
	// it in either mode). It is required.
	Workspace string
	// Network lets commands use the network; off, they get a network
	// namespace of their own with nothing but a loopback device.
	Network bool
	// Writable lists more OS directories commands may write in, such as
	// a build cache.
	Writable []string
	// Path is the bwrap executable: a path, or a name looked up in PATH
	// ("bwrap" unless set).
	Path string
}

// Bubblewrap returns a Sandbox that runs every command under bubblewrap
// (bwrap, Linux): the root file system read-only, /dev and /proc of
// their own, a private /tmp, the workspace writable unless ReadOnly, no
// network unless allowed, and a PID namespace of their own that dies with
// its parent, so nothing a command starts outlives it. For full access,
// configure no sandbox: the tools then run commands unconfined and record
// that they do. A command's directory must be visible inside: the workspace, or a
// directory outside the host's /tmp (which the private one hides).
//
// It starts bwrap once to check that it works. When it is missing or
// cannot make its namespaces, the error matches
// harness.CodeSandboxUnavailable and says so plainly, with what to do; the
// host chooses then whether to refuse commands or to run them unconfined
// (and should say which).
func Bubblewrap(cfg BubblewrapConfig) (Sandbox, error) {
	if cfg.Workspace == "" || !filepath.IsAbs(cfg.Workspace) {
		return nil, &harness.Error{Code: harness.CodeInvalidOption,
			Message: fmt.Sprintf("shell: Bubblewrap: the workspace %q must be an absolute OS directory", cfg.Workspace)}
	}
	for _, w := range cfg.Writable {
		if !filepath.IsAbs(w) {
			return nil, &harness.Error{Code: harness.CodeInvalidOption,
				Message: fmt.Sprintf("shell: Bubblewrap: the writable directory %q must be absolute", w)}
		}
	}
	name := cfg.Path
	if name == "" {
		name = "bwrap"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, &harness.Error{Code: harness.CodeSandboxUnavailable, Err: err, Message: fmt.Sprintf(
			"bubblewrap (%s) is not installed, so commands cannot be sandboxed: install the bubblewrap package, or choose full access to run them unconfined", name)}
	}
	b := &bubblewrap{cfg: cfg, path: path}
	if err := b.probe(); err != nil {
		return nil, err
	}
	return b, nil
}

type bubblewrap struct {
	cfg  BubblewrapConfig
	path string
}

// probe runs `true` in the sandbox.
func (b *bubblewrap) probe() error {
	argv, err := b.Wrap([]string{"true"}, "/")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		why := strings.TrimSpace(stderr.String())
		if why == "" {
			why = err.Error()
		}
		return &harness.Error{Code: harness.CodeSandboxUnavailable, Err: err, Message: fmt.Sprintf(
			"bubblewrap cannot create its sandbox here (%s), so commands cannot be sandboxed: allow unprivileged user namespaces (or run bwrap setuid), or choose full access to run them unconfined", why)}
	}
	return nil
}

// Wrap implements Sandbox.
func (b *bubblewrap) Wrap(argv []string, dir string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("nothing to run")
	}
	out := []string{b.path, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"}
	if !b.cfg.Network {
		out = append(out, "--unshare-net")
	}
	out = append(out, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--setenv", "TMPDIR", "/tmp")
	ws := filepath.Clean(b.cfg.Workspace)
	if !b.cfg.ReadOnly {
		out = append(out, "--bind", ws, ws)
	} else {
		out = append(out, "--ro-bind", ws, ws) // it may lie below /tmp
	}
	for _, w := range b.cfg.Writable {
		out = append(out, "--bind", filepath.Clean(w), filepath.Clean(w))
	}
	if dir != "" {
		out = append(out, "--chdir", dir)
	}
	out = append(out, "--")
	return append(out, argv...), nil
}

// Describe implements Sandbox.
func (b *bubblewrap) Describe() string {
	var parts []string
	mode := "workspace-write"
	if b.cfg.ReadOnly {
		mode = "read-only"
	}
	parts = append(parts, "bubblewrap "+mode+": root read-only")
	if !b.cfg.ReadOnly {
		parts = append(parts, "workspace "+b.cfg.Workspace+" writable")
	} else {
		parts = append(parts, "workspace "+b.cfg.Workspace+" read-only")
	}
	for _, w := range b.cfg.Writable {
		parts = append(parts, w+" writable")
	}
	parts = append(parts, "private /tmp")
	if b.cfg.Network {
		parts = append(parts, "network on")
	} else {
		parts = append(parts, "network off")
	}
	parts = append(parts, "own pid namespace")
	return strings.Join(parts, ", ")
}

// sandboxRecord is what the session log keeps of the sandbox in force.
type sandboxRecord struct {
	Sandbox string `json:"sandbox"`
}

type sandboxRecordedKey struct{}

// recordSandbox writes the sandbox in force to the session log, once
// per session (shells record theirs when they open).
func (c *config) recordSandbox(ctx context.Context, call *tools.Call) {
	env := callEnv(call)
	if env == nil || env.State == nil || env.Record == nil {
		return
	}
	once, err := tools.LoadState(env.State, sandboxRecordedKey{}, func() *sync.Once { return new(sync.Once) })
	if err != nil {
		return
	}
	once.Do(func() {
		desc := "none: commands run unconfined"
		if c.sandbox != nil {
			desc = c.sandbox.Describe()
		}
		if err := env.Record(ctx, call, "sandbox", sandboxRecord{Sandbox: desc}); err != nil && env.Logger != nil {
			env.Logger.Warn("recording the sandbox failed", "error", err)
		}
	})
}
