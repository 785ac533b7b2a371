package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/internal/units"
)

// BubblewrapConfig configures the bubblewrap sandbox. The zero value of
// every field but Workspace is a safe default.
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
	// namespace of their own with nothing but a loopback device (and no
	// abstract unix sockets of the host, which live per network
	// namespace).
	Network bool
	// Writable lists more OS directories commands may write in, such as
	// a build cache.
	Writable []string
	// Readable lists OS paths commands may read although the sandbox
	// hides them by default (home directories, /run, /var/tmp; a module
	// cache under the home directory, say). A unix socket named here
	// exactly (or in Writable) stays connectable.
	Readable []string
	// Paths is the path policy the session's file tools obey
	// (permission.Policy.Paths, which fs.Restrict applies below them),
	// for the sandbox to enforce on commands too: what it denies for
	// reading is masked (an empty read-only file over a file, an empty
	// read-only directory over a directory), what it denies for changing
	// is read-only. It must also list what it denies (fs.DenyLister).
	// Patterns are matched against what exists when a command starts: a
	// one-shot command or a background job gets masks made at its start,
	// a persistent shell keeps those it got when it opened, and a file
	// that comes to match a rule later is not masked from commands
	// already running.
	Paths fs.PathPolicy
	// TmpSize is the size in bytes of the private /tmp (which holds the
	// private home directory too) and of the private /dev/shm: 2 GiB
	// unless set.
	TmpSize int64
	// Limits bound each command's processes; a zero field keeps its
	// default.
	Limits ResourceLimits
	// Path is the bwrap executable: a path, or a name looked up in PATH
	// ("bwrap" unless set).
	Path string
}

// ResourceLimits bound what one sandboxed command may use. A zero field
// keeps its default; a negative one means no limit.
type ResourceLimits struct {
	// Processes bounds the processes (and threads) of one command: 256 per
	// CPU, at least 1024, which a parallel go build or go test fits. For a
	// non-root user it is RLIMIT_NPROC inside the sandbox's user namespace,
	// where only the command's own processes count. RLIMIT_NPROC does not
	// bind root, so as root it is the pid_max of the command's own PID
	// namespace (Linux 6.14 and later, where pid_max is per namespace, and
	// only where the shell tools made that namespace); elsewhere as root
	// there is no bound, and Describe says so.
	Processes int
	// Memory bounds each process's address space (RLIMIT_AS), in bytes:
	// 8 GiB, which go test -race fits.
	Memory int64
	// FileSize bounds each file a process writes (RLIMIT_FSIZE), in
	// bytes: 8 GiB.
	FileSize int64
}

// Defaults of the sandbox.
const (
	defaultTmpSize  = 2 << 30
	defaultMemory   = 8 << 30
	defaultFileSize = 8 << 30
	// hiddenSize is the size of the read-only tmpfs that hides a host
	// directory: only room for the mount points of what is bound into it.
	hiddenSize = 1 << 20
	// minPIDMax is the smallest pid_max the kernel accepts.
	minPIDMax = 301
)

func defaultProcesses() int { return max(1024, 256*runtime.NumCPU()) }

// privateHome is HOME inside the sandbox: on the private /tmp.
const privateHome = "/tmp/home"

// Bubblewrap returns a Sandbox that runs every command under bubblewrap
// (bwrap, Linux):
//
//   - the root file system read-only, /dev, /dev/shm and /proc of their
//     own, a private /tmp of TmpSize bytes, the workspace writable unless
//     ReadOnly;
//   - no host /run, /var/run, /var/tmp or home directories (the host's
//     HOME included; HOME is a private directory on /tmp), and no host
//     unix socket: every socket listening in the host's network namespace
//     that would be visible (in the workspace, say) gets an empty file
//     over it, unless Readable or Writable names it;
//   - what the path policy (Paths) denies masked or read-only, and the
//     directories between a writable root and a masked path made mount
//     points, so that no rename inside the sandbox can carry a masked file
//     to a name the policy does not deny (none for a path it denies by its
//     name alone, which no rename of a directory above it changes);
//   - a user namespace of its own with every capability dropped, as root
//     too, and no further user namespaces (so mount, remount, chroot,
//     unshare, raw sockets and ptrace fail), a PID namespace of its own
//     that dies with its parent (no host process can be seen or
//     signalled), no network unless allowed;
//   - limits on processes, memory and file size (Limits).
//
// The environment is built from an allow-list (see Config.PassEnv) by the
// tools. For full access, configure no sandbox: the tools then run commands
// unconfined and record that they do. A command's directory must be
// visible inside: the workspace, or a directory outside what the sandbox
// hides.
//
// When bwrap is missing, the error matches harness.CodeSandboxUnavailable
// and says so plainly, with what to do; the host chooses then whether to
// refuse commands or to run them unconfined (and should say which). The
// first command wrapped starts bwrap once to check that it can make its
// namespaces, so a session that runs no command never pays for it; when
// it cannot, that command and every later one fail with
// harness.CodeSandboxUnavailable (closed, never unconfined). An invalid
// configuration matches harness.CodeInvalidOption.
func Bubblewrap(cfg BubblewrapConfig) (Sandbox, error) {
	if cfg.Workspace == "" || !filepath.IsAbs(cfg.Workspace) {
		return nil, invalidSandbox("the workspace %q must be an absolute OS directory", cfg.Workspace)
	}
	for _, l := range []struct {
		what string
		list []string
	}{{"writable directory", cfg.Writable}, {"readable path", cfg.Readable}} {
		for _, w := range l.list {
			if !filepath.IsAbs(w) {
				return nil, invalidSandbox("the %s %q must be absolute", l.what, w)
			}
		}
	}
	if cfg.TmpSize < 0 {
		return nil, invalidSandbox("TmpSize is %d; it must not be negative (zero keeps the default)", cfg.TmpSize)
	}
	b := &bubblewrap{cfg: cfg, lim: cfg.Limits, tmpSize: cfg.TmpSize, root: os.Geteuid() == 0}
	if cfg.Paths != nil {
		dl, ok := cfg.Paths.(fs.DenyLister)
		if !ok {
			return nil, invalidSandbox("the path policy (%T) cannot list what it denies (fs.DenyLister), so the sandbox could not mask it", cfg.Paths)
		}
		b.deny = dl
	}
	if b.tmpSize == 0 {
		b.tmpSize = defaultTmpSize
	}
	if b.lim.Processes == 0 {
		b.lim.Processes = defaultProcesses()
	}
	if b.lim.Memory == 0 {
		b.lim.Memory = defaultMemory
	}
	if b.lim.FileSize == 0 {
		b.lim.FileSize = defaultFileSize
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
	b.path = path
	b.prlimit, _ = exec.LookPath("prlimit")
	b.sh, _ = exec.LookPath("sh")
	b.pidMax = perNamespacePIDMax()
	b.hidden = hiddenDirs()
	if b.empty, b.emptyDir, err = maskSources(); err != nil {
		return nil, &harness.Error{Code: harness.CodeSandboxUnavailable, Err: err, Message: fmt.Sprintf(
			"the sandbox cannot make the empty file it masks paths with (%v), so commands cannot be sandboxed", err)}
	}
	return b, nil
}

func invalidSandbox(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "shell: Bubblewrap: " + fmt.Sprintf(format, args...)}
}

type bubblewrap struct {
	cfg     BubblewrapConfig
	path    string
	deny    fs.DenyLister // nil without a path policy
	lim     ResourceLimits
	tmpSize int64
	// root: the tools run as root, where RLIMIT_NPROC does not bind.
	root bool
	// prlimit and sh are the helpers that set the limits ("" when
	// missing); pidMax says that pid_max is per PID namespace here.
	prlimit, sh string
	pidMax      bool
	// hidden are the host directories hidden by default.
	hidden []string
	// empty and emptyDir are what masks are bound from.
	empty, emptyDir string

	// planned, when set by tests, runs after a command's mounts are
	// planned and before the command starts.
	planned func()

	// probeOnce runs the probe before the first command; probeErr is
	// its outcome, returned by every Wrap after a failure.
	probeOnce sync.Once
	probeErr  error
}

// probe runs `true` in the sandbox (once per sandbox, before its first
// command).
func (b *bubblewrap) probe() error {
	argv, err := b.wrap([]string{"true"}, "/", nil)
	if err != nil {
		return &harness.Error{Code: harness.CodeSandboxUnavailable, Err: err, Message: fmt.Sprintf(
			"the sandbox cannot be set up (%v), so commands cannot be sandboxed", err)}
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
	return b.WrapContained(argv, dir, nil)
}

// OwnInit implements shellkit.InitSandbox: bwrap makes a PID namespace of
// its own (--unshare-pid), whose init ends every process in it when the
// command ends, and the outer bwrap waits for that init; so its command
// line may be the first process of the tools' PID namespace, without an
// init or holder of the tools'. Ending it (SIGKILL) ends the namespace.
func (b *bubblewrap) OwnInit() bool { return true }

// WrapContained is Wrap knowing how the tools contain the command: in a PID
// namespace of their own made as root (whose /proc the init mounted),
// the command's pid_max can bound its processes.
func (b *bubblewrap) WrapContained(argv []string, dir string, cont *proctree.Containment) ([]string, error) {
	b.probeOnce.Do(func() { b.probeErr = b.probe() })
	if b.probeErr != nil {
		return nil, b.probeErr
	}
	return b.wrap(argv, dir, cont)
}

func (b *bubblewrap) wrap(argv []string, dir string, cont *proctree.Containment) ([]string, error) {
	// In a PID namespace the tools made (as root, or inside a user
	// namespace of their own), a small shell sets the limits before bwrap
	// starts: there they bind only this command. Elsewhere prlimit sets
	// them inside the sandbox.
	outer := b.outer(cont)
	body, err := b.body(argv, dir, !outer)
	if err != nil || !outer {
		return body, err
	}
	return append(b.limitShell(cont, limitScript+`exec "$@"`), body...), nil
}

// spareBody is bwrap's command line for argv started from a spare (the
// limits are set already, and with ownNet the command's network namespace
// is made), once the sandbox has been checked.
func (b *bubblewrap) spareBody(argv []string, dir string, ownNet bool) ([]string, error) {
	b.probeOnce.Do(func() { b.probeErr = b.probe() })
	if b.probeErr != nil {
		return nil, b.probeErr
	}
	out, err := b.body(argv, dir, false)
	if err != nil || !ownNet {
		return out, err
	}
	// The spare's network namespace is the command's own already.
	if i := slices.Index(out[:slices.Index(out, "--")], "--unshare-net"); i >= 0 {
		out = slices.Delete(out, i, i+1)
	}
	return out, nil
}

// outer reports whether the limits are set by a shell in front of bwrap,
// as the first process of the PID namespace the tools make.
func (b *bubblewrap) outer(cont *proctree.Containment) bool {
	return cont != nil && cont.Namespace() && b.sh != ""
}

// limitShell returns the command line of the shell that sets the limits
// of a command in the tools' PID namespace (limitScript), then runs script.
func (b *bubblewrap) limitShell(cont *proctree.Containment, script string) []string {
	pidMax, nproc := 0, 0
	if b.root && !cont.UserNamespace() && b.pidMax && b.lim.Processes > 0 {
		// As root RLIMIT_NPROC does not bind: the pid_max of the
		// command's own PID namespace does.
		pidMax = max(b.lim.Processes, minPIDMax)
	}
	if !b.root && b.lim.Processes > 0 {
		nproc = b.lim.Processes
	}
	return []string{b.sh, "-c", script, "harness-limits",
		strconv.Itoa(pidMax), strconv.Itoa(nproc), strconv.FormatInt(max(b.lim.Memory, 0), 10), strconv.FormatInt(max(b.lim.FileSize, 0), 10)}
}

// body returns bwrap's command line for argv, with the mounts planned
// now, and prlimit in front of argv when withLimits.
func (b *bubblewrap) body(argv []string, dir string, withLimits bool) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("nothing to run")
	}
	plan, err := b.plan(context.Background())
	if err != nil {
		return nil, err
	}
	if b.planned != nil {
		b.planned()
	}
	out := []string{b.path, "--die-with-parent", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"}
	if !b.cfg.Network {
		out = append(out, "--unshare-net")
	}
	size := strconv.FormatInt(b.tmpSize, 10)
	out = append(out, "--ro-bind", "/", "/", "--proc", "/proc",
		"--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm",
		"--size", size, "--tmpfs", "/tmp", "--dir", privateHome,
		"--setenv", "TMPDIR", "/tmp", "--setenv", "HOME", privateHome)
	hidden := b.hiddenNow()
	for _, h := range hidden {
		out = append(out, "--size", strconv.Itoa(hiddenSize), "--tmpfs", h)
	}
	ws := filepath.Clean(b.cfg.Workspace)
	if !b.cfg.ReadOnly {
		out = append(out, "--bind", ws, ws)
	} else {
		out = append(out, "--ro-bind", ws, ws) // it may lie below /tmp
	}
	for _, w := range b.cfg.Writable {
		out = append(out, "--bind", filepath.Clean(w), filepath.Clean(w))
	}
	for _, r := range b.cfg.Readable {
		out = append(out, "--ro-bind-try", filepath.Clean(r), filepath.Clean(r))
	}
	for _, p := range plan.pins {
		out = append(out, "--bind", p, p)
	}
	for _, p := range plan.readOnly {
		out = append(out, "--ro-bind", p, p)
	}
	for _, p := range plan.maskDirs {
		out = append(out, "--ro-bind", b.emptyDir, p)
	}
	for _, p := range plan.maskFiles {
		out = append(out, "--ro-bind", b.empty, p)
	}
	out = append(out, "--remount-ro", "/dev")
	for _, h := range hidden {
		out = append(out, "--remount-ro", h)
	}
	if dir != "" {
		out = append(out, "--chdir", dir)
	}
	out = append(out, "--")
	if withLimits {
		out = append(out, b.limitArgs()...)
	}
	return append(out, argv...), nil
}

// hiddenNow returns the hidden directories but those the configuration
// binds in whole (a workspace that is a home directory, say), or lies
// below: hiding them would hide, or remount read-only, what was bound.
func (b *bubblewrap) hiddenNow() []string {
	bound := append(append([]string{b.cfg.Workspace}, b.cfg.Writable...), b.cfg.Readable...)
	var out []string
	for _, h := range b.hidden {
		keep := true
		for _, v := range bound {
			v = filepath.Clean(v)
			if v == h || strings.HasPrefix(h, v+string(filepath.Separator)) {
				keep = false
			}
		}
		if keep {
			out = append(out, h)
		}
	}
	return out
}

// limitScript sets the limits of a command from inside the PID namespace
// the tools made for it, as the namespace's first process, before the
// rest of the shell's script runs bwrap: pid_max (when not 0) only when it
// is pid 1 (a write to /proc/sys/kernel/pid_max sets the writer's own PID
// namespace's value, on the kernels where the tools ask for it),
// RLIMIT_NPROC (when not 0; this namespace is inside a user namespace of
// its own, where only the command's processes count), and the address
// space and file size in bytes (when not 0), converted to the units of
// bash or dash. Its arguments are those four numbers.
const limitScript = `p=$1 n=$2 v=$3 f=$4; shift 4
if [ "$p" != 0 ] && [ "$$" = 1 ]; then echo "$p" >/proc/sys/kernel/pid_max 2>/dev/null; fi
if [ "$n" != 0 ]; then ulimit -u "$n" 2>/dev/null || ulimit -p "$n" 2>/dev/null; fi
if [ "$v" != 0 ]; then ulimit -v $((v / 1024)); fi
if [ "$f" != 0 ]; then if [ -n "$BASH_VERSION" ]; then ulimit -f $((f / 1024)); else ulimit -f $((f / 512)); fi; fi
`

// limitArgs returns the command that sets the resource limits inside the
// sandbox, in front of the command, where no shell could set them before
// bwrap started.
func (b *bubblewrap) limitArgs() []string {
	if b.prlimit == "" {
		return nil
	}
	out := []string{b.prlimit}
	if b.lim.Processes > 0 && !b.root {
		out = append(out, "--nproc="+strconv.Itoa(b.lim.Processes))
	}
	if b.lim.Memory > 0 {
		out = append(out, "--as="+strconv.FormatInt(b.lim.Memory, 10))
	}
	if b.lim.FileSize > 0 {
		out = append(out, "--fsize="+strconv.FormatInt(b.lim.FileSize, 10))
	}
	if len(out) == 1 {
		return nil
	}
	return append(out, "--")
}

// processBound describes how the processes of a command are bounded.
func (b *bubblewrap) processBound() string {
	switch {
	case b.lim.Processes <= 0:
		return "no process limit"
	case !b.root:
		return fmt.Sprintf("at most %d processes (RLIMIT_NPROC in a user namespace of the command's own)", b.lim.Processes)
	case b.pidMax && b.sh != "":
		return fmt.Sprintf("at most %d processes (pid_max of the PID namespace the tools make as root; none where they cannot)", max(b.lim.Processes, minPIDMax))
	}
	return "no process limit: RLIMIT_NPROC does not bind root, and pid_max is not per PID namespace before Linux 6.14"
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
	for _, r := range b.cfg.Readable {
		parts = append(parts, r+" readable")
	}
	parts = append(parts, "private /tmp of "+units.Bytes(b.tmpSize)+" (HOME "+privateHome+")")
	if len(b.hidden) > 0 {
		parts = append(parts, "hidden: "+strings.Join(b.hidden, " "))
	}
	parts = append(parts, "host unix sockets masked")
	if b.deny != nil {
		parts = append(parts, "paths the permission rules deny masked or read-only")
	}
	if b.cfg.Network {
		parts = append(parts, "network on")
	} else {
		parts = append(parts, "network off")
	}
	parts = append(parts, "own user namespace with no capabilities", "own pid namespace", b.processBound())
	if b.prlimit != "" {
		parts = append(parts, "address space "+units.Bytes(b.lim.Memory)+" and files "+units.Bytes(b.lim.FileSize)+" per process")
	} else {
		parts = append(parts, "no memory or file size limit (prlimit is missing)")
	}
	return strings.Join(parts, ", ")
}
