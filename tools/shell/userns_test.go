//go:build linux

package shell

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// helperEnv marks the run of this test binary that
// TestUserNamespaceUnprivileged starts as an unprivileged user.
const helperEnv = "HARNESS_SHELL_UNPRIVILEGED_HELPER"

// TestUserNamespaceUnprivileged covers the user-namespace path: run as
// root, it runs this test binary again as nobody (65534), where a PID
// namespace can only be made inside a user namespace, and checks that
// the escapes are contained there too.
func TestUserNamespaceUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: the other tests already run unprivileged, in a user namespace where one can be made")
	}
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	// The test's temporary directories are private to root.
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "shell.test")
	copyFile(t, self, bin)

	cmd := exec.Command(bin, "-test.run=^TestUnprivilegedHelper$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "NO USER NAMESPACE") {
		t.Skipf("no user namespace can be made as nobody here: %s", lastLine(text))
	}
	require.NoError(t, err, text)
	require.Contains(t, text, "--- PASS: TestUnprivilegedHelper", text)
	if testing.Verbose() {
		t.Log(text)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// TestUnprivilegedHelper runs, as nobody, escapes against two stop paths
// and checks that they run in a PID namespace made inside a user
// namespace.
func TestUnprivilegedHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("runs only as the helper of TestUserNamespaceUnprivileged")
	}
	require.NotZero(t, os.Geteuid(), "the helper must not run as root")
	c := newConfig(nil).containment()
	if !c.Namespace() {
		t.Logf("NO USER NAMESPACE: %s", c)
		return
	}
	require.True(t, c.UserNamespace(), "an unprivileged PID namespace comes with a user namespace")
	cont := testContainment{name: "userns", want: "pid namespace; /proc shows the host's pids"}
	interp := interpreters(t)
	var escs []escape
	for _, esc := range escapes {
		if esc.need == "" || interp[esc.need] != "" {
			escs = append(escs, esc)
		}
	}
	var wg sync.WaitGroup
	for _, sp := range stopPaths {
		if sp.name != "bash cancel" && sp.name != "bash exit" && sp.name != "shell_close" {
			continue
		}
		wg.Go(func() {
			t.Run(sp.name, func(t *testing.T) { runPath(t, cont, sp, escs, interp) })
		})
	}
	wg.Wait()
}
