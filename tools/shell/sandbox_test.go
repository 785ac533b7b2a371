package shell

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// needBwrap skips the test, with one line, when bubblewrap is missing or
// cannot make its namespaces here.
func needBwrap(t testing.TB) {
	t.Helper()
	dir := t.TempDir()
	if _, err := Bubblewrap(BubblewrapConfig{Workspace: dir}); err != nil {
		t.Skipf("bubblewrap unavailable: %v", err)
	}
}

func sandboxed(t testing.TB, ws string, readOnly, network bool) Sandbox {
	t.Helper()
	sb, err := Bubblewrap(BubblewrapConfig{ReadOnly: readOnly, Workspace: ws, Network: network})
	require.NoError(t, err)
	return sb
}

func TestBubblewrapMissing(t *testing.T) {
	_, err := Bubblewrap(BubblewrapConfig{Workspace: t.TempDir(), Path: filepath.Join(t.TempDir(), "bwrap")})
	require.Error(t, err)
	assert.Equal(t, harness.CodeSandboxUnavailable, harness.CodeOf(err))
	assert.Contains(t, err.Error(), "is not installed, so commands cannot be sandboxed: install the bubblewrap package, or choose full access to run them unconfined")

	_, err = Bubblewrap(BubblewrapConfig{Workspace: "relative"})
	assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err))
	_, err = Bubblewrap(BubblewrapConfig{})
	assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err), "the workspace is required")
}

func TestBubblewrapConfinesBash(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := shelltest.Env(t)
	outsideDir := t.TempDir()
	outside := filepath.Join(outsideDir, "keep.txt")
	require.NoError(t, os.WriteFile(outside, []byte("original"), 0o644))
	sb := sandboxed(t, env.Cwd, false, false)
	assert.Contains(t, sb.Describe(), "network off")
	tool := Bash(Config{Sandbox: sb})
	ctx := context.Background()

	cases := []struct {
		name    string
		command string
		want    string
		code    int
	}{
		// The outside file lies below the host's /tmp, which the sandbox
		// replaces with its own: it cannot even be seen.
		{"write outside fails", "echo changed > " + outside, outside, 1},
		{"root is read-only", "touch /usr/harness-probe", "Read-only file system", 1},
		{"workspace is writable", "echo made > inside.txt && cat inside.txt", "made", 0},
		{"private tmp is writable", "echo t > /tmp/x && cat /tmp/x", "t", 0},
		{"pid namespace hides host processes", "ls /proc | grep -c '^[0-9]'", "", 0},
	}
	for _, c := range cases {
		res := shelltest.Run(t, ctx, tool, env, map[string]any{"command": c.command})
		require.NotNil(t, res.Render.Terminal, c.name)
		require.NotNil(t, res.Render.Terminal.ExitCode, "%s: %s", c.name, res.Text())
		if c.code == 0 {
			assert.Equal(t, 0, *res.Render.Terminal.ExitCode, "%s: %s", c.name, res.Text())
		} else {
			assert.NotEqual(t, 0, *res.Render.Terminal.ExitCode, "%s: %s", c.name, res.Text())
		}
		assert.Contains(t, res.Text(), c.want, c.name)
		if c.name == "pid namespace hides host processes" {
			n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(res.Text(), "\n", 2)[0]))
			require.NoError(t, err, res.Text())
			assert.Less(t, n, 6, "only the sandbox's own processes are visible: %s", res.Text())
			assert.NotContains(t, res.Text(), strconv.Itoa(os.Getpid()))
		}
	}
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "original", string(b), "the outside file is unchanged")
	b, err = os.ReadFile(filepath.Join(env.Cwd, "inside.txt"))
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(b))
	rec := shelltest.RecordsOf(t, env).All()
	require.Len(t, rec, 1, "the sandbox in force is recorded once")
	assert.Equal(t, "sandbox", rec[0].Name)
	assert.Contains(t, string(rec[0].Data), "bubblewrap workspace-write")

	ro := Bash(Config{Sandbox: sandboxed(t, env.Cwd, true, false)})
	res := shelltest.Run(t, ctx, ro, env, map[string]any{"command": "echo x > ro.txt"})
	assert.Contains(t, res.Text(), "Read-only file system")
	assert.NoFileExists(t, filepath.Join(env.Cwd, "ro.txt"))
}

func TestBubblewrapNetwork(t *testing.T) {
	needBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "hello from the host")
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	env := shelltest.Env(t)
	cmd := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", port)
	ctx := context.Background()

	off := Bash(Config{Sandbox: sandboxed(t, env.Cwd, false, false)})
	res := shelltest.Run(t, ctx, off, env, map[string]any{"command": cmd})
	assert.NotContains(t, res.Text(), "hello from the host")
	assert.NotEqual(t, 0, *res.Render.Terminal.ExitCode, res.Text())

	on := Bash(Config{Sandbox: sandboxed(t, env.Cwd, false, true)})
	res = shelltest.Run(t, ctx, on, env, map[string]any{"command": cmd})
	assert.Contains(t, res.Text(), "hello from the host")
}

func TestBubblewrapNothingOutlivesATimeout(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := shelltest.Env(t)
	tag := shelltest.SleepTag(t)
	tool := Bash(Config{Sandbox: sandboxed(t, env.Cwd, false, false), Timeouts: Timeouts{KillGrace: shellkit.DefaultKillGrace / 6}})
	res := shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "setsid sleep " + tag + " & sleep 30", "timeout_ms": 1500})
	assert.Equal(t, "timeout", res.Render.Terminal.Status, res.Text())
	shelltest.RequireNoTagged(t, tag)
}

// TestBubblewrapNoFalseLeftovers: bwrap's own init ends the sandbox when
// the command ends, and is no leftover of the command: a command that
// leaves nothing running gets no "left running" line, no containment line
// and no stop (issue 38).
func TestBubblewrapNoFalseLeftovers(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := shelltest.Env(t)
	tool := Bash(Config{Sandbox: sandboxed(t, env.Cwd, false, false)})
	for range 10 {
		res := shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "true"})
		require.False(t, res.IsError, res.Text())
		require.True(t, strings.HasPrefix(res.Text(), "(no output)\n[exit code 0 · "), res.Text())
		require.NotContains(t, res.Text(), "left running", res.Text())
		require.NotContains(t, res.Text(), "[containment:", res.Text())
	}
}

// TestBubblewrapStopsEverything: a cancelled or timed-out sandboxed
// command, whose processes left its session or ignore SIGTERM, leaves
// nothing running (when bash ends on SIGTERM, bwrap's init ends and the
// kernel kills the rest), and its result says how it was stopped.
func TestBubblewrapStopsEverything(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := shelltest.Env(t)
	tool := Bash(Config{Sandbox: sandboxed(t, env.Cwd, false, false), Timeouts: Timeouts{KillGrace: shellkit.DefaultKillGrace / 6}})
	tag, stubborn := shelltest.SleepTag(t), shelltest.SleepTag(t)
	cmd := "setsid sleep " + tag + " & (trap '' TERM; exec sleep " + stubborn + ") & echo started; sleep 30"
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	res := shelltest.Run(t, ctx, tool, env, map[string]any{"command": cmd})
	assert.Equal(t, "cancelled", res.Render.Terminal.Status, res.Text())
	assert.Contains(t, res.Text(), "[cancelled after ", res.Text())
	shelltest.RequireNoTagged(t, tag)
	shelltest.RequireNoTagged(t, stubborn)

	res = shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "setsid sleep " + tag + " & echo started; sleep 30", "timeout_ms": 800})
	assert.Equal(t, "timeout", res.Render.Terminal.Status, res.Text())
	assert.Contains(t, res.Text(), "[timed out after 800 ms: its processes were sent SIGTERM and ended", res.Text())
	shelltest.RequireNoTagged(t, tag)
}

func TestBubblewrapPersistentShell(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := shelltest.Env(t)
	sb := sandboxed(t, env.Cwd, false, false)
	k := shelltest.NewShells(t, env, Tools(Config{Sandbox: sb}))
	id, _ := k.OpenShell(nil)
	res := k.Do(id, "cd sub 2>/dev/null; X=kept; echo w > f.txt; echo $X")
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "kept")
	res = k.Do(id, "echo $X; touch /usr/nope")
	assert.Contains(t, res.Text(), "kept", "the shell keeps its state inside the sandbox")
	assert.Contains(t, res.Text(), "Read-only file system")
	assert.FileExists(t, filepath.Join(env.Cwd, "f.txt"))
	rec := shelltest.RecordsOf(t, env).All()
	require.NotEmpty(t, rec)
	assert.Contains(t, string(rec[0].Data), "bubblewrap workspace-write")
	res = shelltest.Run(t, context.Background(), k.Close, env, map[string]any{"session_id": id})
	require.False(t, res.IsError, res.Text())
}

// BenchmarkSandboxStart runs `true` under the bubblewrap sandbox through
// the bash tool's code path (arguments decoded, mounts planned, the tools'
// PID namespace, bwrap, limits, output collected) interleaved with a bare
// `bash -c true` under os/exec, and reports the ratio (sandboxed/bare) as
// "ratio". Beside them, in the
// same loop, it times where the difference goes: the same tool without a
// sandbox (the tools' own PID namespace), bwrap's command line run
// directly under os/exec, the planning of the mounts (the walk of what
// the path rules deny and of the host's sockets), and the command line of
// the sandbox before issue 27 run directly (the old baseline).
func BenchmarkSandboxStart(b *testing.B) {
	needBwrap(b)
	env := shelltest.Env(b)
	ws := env.Cwd
	writeTree(b, ws)
	pol, err := permission.New(permission.Rules{Deny: []string{"Read(./secrets/**)", "Edit(./.git/**)", "Read(.env)"}})
	require.NoError(b, err)
	sb, err := Bubblewrap(BubblewrapConfig{Workspace: ws, Paths: pol.Paths(ws)})
	require.NoError(b, err)
	bash, err := exec.LookPath("bash")
	require.NoError(b, err)
	boxed := Bash(Config{Sandbox: sb})
	bare := Bash(Config{})
	boxedCall := shelltest.NewCall(b, boxed, env, map[string]any{"command": "true"})
	bareCall := shelltest.NewCall(b, bare, env, map[string]any{"command": "true"})
	argv, err := sb.Wrap([]string{bash, "-c", "true"}, ws)
	require.NoError(b, err)
	old, err := legacyBwrap{ws: ws}.Wrap([]string{bash, "-c", "true"}, ws)
	require.NoError(b, err)
	bw := sb.(*bubblewrap)
	// Wall time, and the CPU time of the processes each part started (a
	// busy machine stretches the first much more than the second).
	var wall, cpu [6]time.Duration
	part := func(i int, f func()) {
		c0, t0 := childCPU(), time.Now()
		f()
		wall[i] += time.Since(t0)
		cpu[i] += childCPU() - c0
	}
	parts := []func(){
		func() {
			shelltest.MustRun(b, boxed, boxedCall, "[exit code 0")
			// Untimed: the pause after a result in which the tool starts
			// the next command's spare, as it would while a model thinks.
			b.StopTimer()
			t0 := time.Now()
			time.Sleep(think)
			wall[0] -= time.Since(t0)
			b.StartTimer()
		},
		func() { require.NoError(b, exec.Command(bash, "-c", "true").Run()) },
		func() { shelltest.MustRun(b, bare, bareCall, "[exit code 0") },
		func() { require.NoError(b, exec.Command(argv[0], argv[1:]...).Run()) },
		func() {
			_, err := bw.plan(context.Background())
			require.NoError(b, err)
		},
		func() { require.NoError(b, exec.Command(old[0], old[1:]...).Run()) },
	}
	// The order alternates, forwards then backwards, so no part always
	// follows the same one: the sandboxed tool and bare bash take turns
	// going first.
	for i := 0; b.Loop(); i++ {
		for k := range parts {
			j := k
			if i%2 == 1 {
				j = len(parts) - 1 - k
			}
			part(j, parts[j])
		}
	}
	n := float64(b.N)
	for i, name := range []string{"sandboxed-tool", "bare-bash", "unsandboxed-tool", "bwrap-direct", "mount-plan", "old-bwrap-direct"} {
		b.ReportMetric(float64(wall[i].Nanoseconds())/n, name+"-ns/op")
		if i != 4 {
			b.ReportMetric(float64(cpu[i].Nanoseconds())/n, name+"-cpu-ns/op")
		}
	}
	b.ReportMetric(float64(wall[0])/float64(wall[1]), "ratio") // sandboxed/bare
	b.ReportMetric(float64(wall[3])/float64(wall[1]), "bwrap-direct/bare")
	b.ReportMetric(float64(wall[5])/float64(wall[1]), "old-bwrap-direct/bare")
	b.ReportMetric(float64(cpu[3])/float64(cpu[1]), "bwrap-direct/bare-cpu")
}

// childCPU is the CPU time of the process's children that have ended.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// legacyBwrap is the bubblewrap sandbox as it was before issue 27 (the
// flags it ran commands with), for the report's "before" column.
type legacyBwrap struct{ ws string }

func (l legacyBwrap) Wrap(argv []string, dir string) ([]string, error) {
	out := []string{"bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--setenv", "TMPDIR", "/tmp", "--bind", l.ws, l.ws}
	if dir != "" {
		out = append(out, "--chdir", dir)
	}
	return append(append(out, "--"), argv...), nil
}

func (legacyBwrap) Describe() string { return "bubblewrap as before issue 27" }

// writeTree gives a workspace the shape of a small project: a few hundred
// files in nested directories, a denied directory and a .git.
func writeTree(b *testing.B, ws string) {
	for d := range 40 {
		dir := filepath.Join(ws, "pkg", strconv.Itoa(d), "sub")
		require.NoError(b, os.MkdirAll(dir, 0o755))
		for f := range 8 {
			require.NoError(b, os.WriteFile(filepath.Join(dir, strconv.Itoa(f)+".go"), []byte("package x\n"), 0o644))
		}
	}
	for _, p := range []string{"secrets/key.txt", ".git/config", "sub/.env"} {
		require.NoError(b, os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(ws, p), []byte("x\n"), 0o644))
	}
}
