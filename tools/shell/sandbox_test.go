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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
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
	env := testEnv(t)
	outsideDir := t.TempDir()
	outside := filepath.Join(outsideDir, "keep.txt")
	require.NoError(t, os.WriteFile(outside, []byte("original"), 0o644))
	sb := sandboxed(t, env.Cwd, false, false)
	assert.Contains(t, sb.Describe(), "network off")
	tool := Bash(WithProcess(Process{Sandbox: sb}))
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
		res := run(t, ctx, tool, env, map[string]any{"command": c.command})
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
	rec := recordsOf(t, env).all()
	require.Len(t, rec, 1, "the sandbox in force is recorded once")
	assert.Equal(t, "sandbox", rec[0].name)
	assert.Contains(t, string(rec[0].data), "bubblewrap workspace-write")

	ro := Bash(WithProcess(Process{Sandbox: sandboxed(t, env.Cwd, true, false)}))
	res := run(t, ctx, ro, env, map[string]any{"command": "echo x > ro.txt"})
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
	env := testEnv(t)
	cmd := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", port)
	ctx := context.Background()

	off := Bash(WithProcess(Process{Sandbox: sandboxed(t, env.Cwd, false, false)}))
	res := run(t, ctx, off, env, map[string]any{"command": cmd})
	assert.NotContains(t, res.Text(), "hello from the host")
	assert.NotEqual(t, 0, *res.Render.Terminal.ExitCode, res.Text())

	on := Bash(WithProcess(Process{Sandbox: sandboxed(t, env.Cwd, false, true)}))
	res = run(t, ctx, on, env, map[string]any{"command": cmd})
	assert.Contains(t, res.Text(), "hello from the host")
}

func TestBubblewrapNothingOutlivesATimeout(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := testEnv(t)
	tag := sleepTag(t)
	tool := Bash(WithProcess(Process{Sandbox: sandboxed(t, env.Cwd, false, false)}), WithTimeouts(Timeouts{KillGrace: defaultKillGrace / 6}))
	res := run(t, context.Background(), tool, env, map[string]any{"command": "setsid sleep " + tag + " & sleep 30", "timeout_ms": 1500})
	assert.Equal(t, "timeout", res.Render.Terminal.Status, res.Text())
	requireNoTagged(t, tag)
}

func TestBubblewrapPersistentShell(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := testEnv(t)
	sb := sandboxed(t, env.Cwd, false, false)
	k := newKit(t, env, WithProcess(Process{Sandbox: sb}))
	id, _ := k.openShell(nil)
	res := k.do(id, "cd sub 2>/dev/null; X=kept; echo w > f.txt; echo $X")
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "kept")
	res = k.do(id, "echo $X; touch /usr/nope")
	assert.Contains(t, res.Text(), "kept", "the shell keeps its state inside the sandbox")
	assert.Contains(t, res.Text(), "Read-only file system")
	assert.FileExists(t, filepath.Join(env.Cwd, "f.txt"))
	rec := recordsOf(t, env).all()
	require.NotEmpty(t, rec)
	assert.Contains(t, string(rec[0].data), "bubblewrap workspace-write")
	res = run(t, context.Background(), k.close, env, map[string]any{"session_id": id})
	require.False(t, res.IsError, res.Text())
}

// BenchmarkSandboxStart runs `true` under bubblewrap beside a fresh,
// unsandboxed `bash -c true`; the ratio is the sandbox's start-up cost.
func BenchmarkSandboxStart(b *testing.B) {
	needBwrap(b)
	ws := b.TempDir()
	sb, err := Bubblewrap(BubblewrapConfig{Workspace: ws})
	require.NoError(b, err)
	bash, err := exec.LookPath("bash")
	require.NoError(b, err)
	b.Run("bash_c_true", func(b *testing.B) {
		for b.Loop() {
			require.NoError(b, exec.Command(bash, "-c", "true").Run())
		}
	})
	b.Run("bwrap_bash_c_true", func(b *testing.B) {
		argv, err := sb.Wrap([]string{bash, "-c", "true"}, ws)
		require.NoError(b, err)
		for b.Loop() {
			require.NoError(b, exec.Command(argv[0], argv[1:]...).Run())
		}
	})
}
