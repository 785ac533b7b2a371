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

	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// readySpare waits until the session's spare start for bt is made and
// returns it with its shell's pid, or nil when the tools make none here.
func readySpare(t *testing.T, bt *bashTool, env *tools.Env) (*spares, int) {
	t.Helper()
	if bw, _ := bt.spareSandbox(); bw == nil {
		return nil, 0
	}
	sp := bt.sparesOf(env)
	require.NotNil(t, sp)
	deadline := time.Now().Add(30 * time.Second)
	for {
		sp.mu.Lock()
		ready := sp.ready
		sp.mu.Unlock()
		if ready != nil {
			return sp, ready.p.Main()
		}
		require.True(t, time.Now().Before(deadline), "no spare was made")
		time.Sleep(5 * time.Millisecond)
	}
}

// A command started from a spare gets what any command gets: masks made
// when it starts (a file that came to match a rule after the spare was
// made is masked), its limits, a PID namespace of its own, and the
// allow-listed environment; and a spare not used ends with the session.
func TestBubblewrapSpareStart(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := shelltest.Env(t)
	ws := env.Cwd
	t.Setenv("HARNESS_SPARE_SECRET_TOKEN", "tok-not-for-commands")
	pol, err := permission.New(permission.Rules{Deny: []string{"Read(./secrets/**)", "Read(.env)"}})
	require.NoError(t, err)
	sb, err := Bubblewrap(BubblewrapConfig{Workspace: ws, Paths: pol.Paths(ws)})
	require.NoError(t, err)
	bt := &bashTool{cfg: Config{Sandbox: sb}.resolve()}
	tool := bt.tools()[0]

	res := shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "echo first"})
	require.Contains(t, res.Text(), "first\n", res.Text())
	sp, pid := readySpare(t, bt, env)
	if sp == nil {
		t.Skip("no spare starts here: the limits are not set by a shell in the tools' PID namespace")
	}

	if cont := bt.cfg.Containment(); os.Geteuid() == 0 && !cont.UserNamespace() {
		sp.mu.Lock()
		assert.True(t, sp.ready.net, "as root the spare brings the command's network namespace")
		sp.mu.Unlock()
	}

	// Made after the spare: the rules must still cover them.
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "secrets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "secrets", "key.txt"), []byte("SPARESECRET\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "sub", ".env"), []byte("SPAREENV\n"), 0o644))

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

	cmd := `cat secrets/key.txt sub/.env; echo "v=$(ulimit -v) f=$(ulimit -f) pid=$$ tok=$HARNESS_SPARE_SECRET_TOKEN"; touch /usr/spare-attack 2>&1 | grep -c Read-only; mount -o remount,rw / 2>/dev/null || echo NOREMOUNT; echo 'it'"'"'s quoted $HOME'` +
		fmt.Sprintf("\necho net: $(tail -n +3 /proc/net/dev | cut -d: -f1); (exec 3<>/dev/tcp/127.0.0.1/1) 2>&1 | grep -o -e refused -e unreachable; (exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3) 2>/dev/null; ip link set lo down 2>/dev/null || echo NOLINKSET", port)
	res = shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": cmd})
	text := res.Text()
	sp.mu.Lock()
	used := sp.used
	sp.mu.Unlock()
	require.Equal(t, 1, used, "the second command starts from the spare")
	assert.NotContains(t, text, "SPARESECRET", text)
	assert.NotContains(t, text, "SPAREENV", text)
	assert.NotContains(t, text, "tok-not-for-commands", text)
	mem := strconv.FormatInt(defaultMemory/1024, 10)
	assert.Contains(t, text, "v="+mem+" f="+strconv.FormatInt(defaultFileSize/1024, 10)+" pid=", text)
	assert.NotContains(t, text, "pid=1 ", "bwrap's init is pid 1, the command another")
	assert.Contains(t, text, "1\nNOREMOUNT\nit's quoted $HOME\n", text)
	assert.Contains(t, text, "\nnet: lo\nrefused\n", "a network namespace of the command's own, with lo up")
	assert.NotContains(t, text, "hello from the host")
	assert.Contains(t, text, "[exit code 0", text)
	if _, err := exec.LookPath("ip"); err == nil {
		assert.Contains(t, text, "NOLINKSET\n", "the command cannot change its network")
	}
	_, err = os.Stat("/usr/spare-attack")
	assert.True(t, os.IsNotExist(err))

	// A spare is used once: the next one is another process.
	_, pid2 := readySpare(t, bt, env)
	assert.NotEqual(t, pid, pid2)
	require.NoError(t, env.State.Close())
	assert.False(t, alive(pid2), "the spare not used ended with the session")
}

// alive reports whether pid runs (a zombie does not count).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z' && syscall.Kill(pid, 0) == nil
}

// A spare no command takes ends after its idle time: a session that runs
// nothing keeps no process.
func TestBubblewrapSpareIdles(t *testing.T) {
	needBwrap(t)
	leakcheck.Check(t)
	env := shelltest.Env(t)
	bt := &bashTool{cfg: Config{Sandbox: sandboxed(t, env.Cwd, false, false)}.resolve()}
	tool := bt.tools()[0]
	if bw, _ := bt.spareSandbox(); bw == nil {
		t.Skip("no spare starts here: the limits are not set by a shell in the tools' PID namespace")
	}
	// The spare waits long enough to be seen alive however slow the
	// machine is; then its idle timer is shortened.
	bt.sparesOf(env).idleAfter = time.Hour
	res := shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "echo first"})
	require.Contains(t, res.Text(), "first\n", res.Text())
	sp, pid := readySpare(t, bt, env)
	require.True(t, alive(pid))
	sp.mu.Lock()
	sp.ready.idle.Reset(300 * time.Millisecond)
	sp.mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.False(t, alive(pid), "the idle spare was stopped")
	sp.mu.Lock()
	assert.Nil(t, sp.ready)
	sp.mu.Unlock()
	// The next command starts from nothing, and works.
	res = shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "echo second"})
	require.Contains(t, res.Text(), "second\n", res.Text())
	sp.mu.Lock()
	assert.Zero(t, sp.used)
	sp.mu.Unlock()
}
