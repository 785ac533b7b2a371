package shelltest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// helperEnv marks the run of a test binary that RunUnprivileged starts
// as an unprivileged user.
const helperEnv = "HARNESS_SHELL_UNPRIVILEGED_HELPER"

// RunUnprivileged covers the user-namespace path: run as root, it runs
// this test binary again as nobody (65534), running only the test named
// helper (which calls UnprivilegedHelper), where a PID namespace can only
// be made inside a user namespace, and checks that it passed.
func RunUnprivileged(t *testing.T, helper string) {
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
	CopyFile(t, self, bin)

	cmd := exec.Command(bin, "-test.run=^"+helper+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "NO USER NAMESPACE") {
		t.Skipf("no user namespace can be made as nobody here: %s", LastLine(text))
	}
	require.NoError(t, err, text)
	require.Contains(t, text, "--- PASS: "+helper, text)
	if testing.Verbose() {
		t.Log(text)
	}
}

// CopyFile copies the file from to the new executable file to.
func CopyFile(t *testing.T, from, to string) {
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

// UnprivilegedHelper runs, as nobody, the escapes against the stop paths
// named, and checks that they run in a PID namespace made inside a user
// namespace. It skips unless RunUnprivileged started it.
func UnprivilegedHelper(t *testing.T, paths []StopPath, names ...string) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("runs only as the helper of RunUnprivileged")
	}
	require.NotZero(t, os.Geteuid(), "the helper must not run as root")
	c := shellkit.Defaults().Containment()
	if !c.Namespace() {
		t.Logf("NO USER NAMESPACE: %s", c)
		return
	}
	require.True(t, c.UserNamespace(), "an unprivileged PID namespace comes with a user namespace")
	cont := Containment{Name: "userns", Want: "pid namespace; /proc shows the host's pids"}
	interp := Interpreters(t)
	var escs []Escape
	for _, esc := range Escapes {
		if esc.Need == "" || interp[esc.Need] != "" {
			escs = append(escs, esc)
		}
	}
	var wg sync.WaitGroup
	for _, sp := range paths {
		if !slices.Contains(names, sp.Name) {
			continue
		}
		wg.Go(func() {
			t.Run(sp.Name, func(t *testing.T) { runPath(t, cont, sp, escs, interp) })
		})
	}
	wg.Wait()
}
