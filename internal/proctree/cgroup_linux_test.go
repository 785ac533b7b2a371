package proctree

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

func TestCgroup2Mount(t *testing.T) {
	info := "25 30 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n" +
		"35 25 0:30 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755\n" +
		"40 35 0:37 /docker/abc /sys/fs/cgroup/with\\040space rw,relatime shared:10 master:3 - cgroup2 cgroup2 rw,nsdelegate\n" +
		"41 35 0:38 / /sys/fs/cgroup/unified2 rw - cgroup2 cgroup2 rw\n"
	mnt, root, ok := cgroup2Mount([]byte(info))
	require.True(t, ok)
	assert.Equal(t, "/sys/fs/cgroup/with space", mnt, "the first cgroup2 mount, unescaped")
	assert.Equal(t, "/docker/abc", root)
	_, _, ok = cgroup2Mount([]byte("35 25 0:30 / /sys/fs/cgroup ro - cgroup cgroup rw,memory\n"))
	assert.False(t, ok, "a cgroup v1 mount is not one")

	p, ok := cgroup2Path([]byte("4:memory:/x\n0::/user.slice/a.scope\n"))
	require.True(t, ok)
	assert.Equal(t, "/user.slice/a.scope", p)
	_, ok = cgroup2Path([]byte("4:memory:/x\n"))
	assert.False(t, ok)
	_, ok = cgroup2Path([]byte("0::/gone (deleted)\n"))
	assert.False(t, ok, "a removed cgroup is no place to make others in")
	assert.Equal(t, `a b\c\0`, unescapeMount(`a\040b\134c\0`))
}

func FuzzCgroup2Mount(f *testing.F) {
	f.Add("40 35 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n", "0::/\n")
	f.Add("40 35 0:37 /a\\040b /m\\134n rw - cgroup2 cgroup2 rw\n", "1:name=systemd:/\n0::/a b/c\n")
	f.Fuzz(func(t *testing.T, mountinfo, self string) {
		mnt, root, ok := cgroup2Mount([]byte(mountinfo))
		if ok {
			require.NotContains(t, mnt, "\n")
			require.NotContains(t, root, "\n")
			require.Contains(t, mountinfo, " - cgroup2")
		}
		p, ok := cgroup2Path([]byte(self))
		if ok {
			require.True(t, strings.HasPrefix(p, "/"))
			require.NotContains(t, p, "\n")
			require.Contains(t, self, "0::"+p)
		}
		if !strings.Contains(mountinfo, `\`) {
			require.Equal(t, mountinfo, unescapeMount(mountinfo))
		}
	})
}

// cgroupOnly returns the cgroup containment, or skips.
func cgroupOnly(t *testing.T) *Containment {
	c := Probe(Options{})
	if !c.Cgroup() {
		t.Skipf("no cgroup containment here (%s)", c)
	}
	return c
}

// TestCgroupSubtree: a process the command moves into a cgroup it made
// below its own is stopped with it, and both cgroups are removed.
func TestCgroupSubtree(t *testing.T) {
	c := cgroupOnly(t)
	leakcheck.Check(t)
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	tag := "harness-subcg-" + hex.EncodeToString(nonce[:])
	script := `d=$(sed -n 's/^0:://p' /proc/self/cgroup); d="$CG${d#"$ROOT"}/sub"; mkdir "$d" || exit 9
( echo "$BASHPID" > "$d/cgroup.procs" && exec -a "$TAG" sleep 300 ) </dev/null >/dev/null 2>&1 &
sleep 300`
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	mp, root, ok := cgroup2Mount(mounts)
	require.True(t, ok)
	if root == "/" {
		root = ""
	}
	p, err := Start(c, Command{Argv: []string{"bash", "-c", script}, Dir: "/",
		Env: []string{"PATH=" + os.Getenv("PATH"), "TAG=" + tag, "CG=" + mp, "ROOT=" + root}})
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(0) })
	deadline := time.Now().Add(time.Minute)
	for len(tagged(tag)) == 0 && time.Now().Before(deadline) && !p.Exited() {
		time.Sleep(10 * time.Millisecond)
	}
	require.Len(t, tagged(tag), 1, "the process in the sub-cgroup runs")
	_, err = os.Stat(filepath.Join(p.cgroup, "sub"))
	require.NoError(t, err, "the command made a cgroup below its own")
	// Both end on SIGTERM; the grace is long so that a loaded machine,
	// slow to run their exit, does not make it a SIGKILL (Stop returns
	// as soon as they are gone).
	out := p.Stop(time.Minute)
	assert.Empty(t, out.Survivors)
	assert.Equal(t, "SIGTERM", out.Signal)
	assert.Empty(t, tagged(tag), "no survivor")
	_, err = os.Stat(p.cgroup)
	assert.ErrorIs(t, err, os.ErrNotExist, "the command's cgroup and the one below it are removed")
	assert.Equal(t, "cgroup", p.How())
	assert.False(t, p.Partial())
}

// TestCgroupLeftovers: what a command leaves running when it exits gets
// SIGTERM first, and the command's cgroup is removed afterwards, as it
// is after a command that leaves nothing.
func TestCgroupLeftovers(t *testing.T) {
	c := cgroupOnly(t)
	leakcheck.Check(t)
	p, err := Start(c, Command{Argv: []string{"bash", "-c", "exit 4"}, Dir: "/", Env: []string{"PATH=" + os.Getenv("PATH")}})
	require.NoError(t, err)
	left, out := p.ReapLeftovers(time.Second)
	assert.False(t, left)
	assert.Equal(t, Outcome{}, out)
	code, _ := p.ExitInfo()
	require.NotNil(t, code)
	assert.Equal(t, 4, *code)
	_, err = os.Stat(p.cgroup)
	assert.ErrorIs(t, err, os.ErrNotExist)

	p, err = Start(c, Command{Argv: []string{"bash", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & exit 0"}, Dir: "/", Env: []string{"PATH=" + os.Getenv("PATH")}})
	require.NoError(t, err)
	left, out = p.ReapLeftovers(5 * time.Second)
	assert.True(t, left)
	assert.Equal(t, "SIGTERM", out.Signal)
	assert.Empty(t, out.Survivors)
	_, err = os.Stat(p.cgroup)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestSweepStaleCgroups: a probe removes the empty cgroups a host that
// no longer runs left behind, and keeps those of live processes and
// those still holding a process.
func TestSweepStaleCgroups(t *testing.T) {
	c := cgroupOnly(t)
	parent := c.cg.parent
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadPID := strconv.Itoa(dead.Process.Pid)
	stale := filepath.Join(parent, "harness-"+deadPID+"-7")
	staleChild := filepath.Join(stale, "inner")
	live := filepath.Join(parent, "harness-1-7") // pid 1 always runs
	for _, d := range []string{stale, staleChild, live} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	t.Cleanup(func() { removeCgroup(stale); removeCgroup(live) })
	// A stale cgroup that still holds a process stays.
	held := filepath.Join(parent, "harness-"+deadPID+"-8")
	require.NoError(t, os.Mkdir(held, 0o755))
	sleeper := exec.Command("sleep", "30")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait(); removeCgroup(held) })
	require.NoError(t, os.WriteFile(filepath.Join(held, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0))

	Probe(Options{})
	_, err := os.Stat(stale)
	assert.ErrorIs(t, err, os.ErrNotExist, "the dead host's empty cgroup and the one below it are removed")
	_, err = os.Stat(live)
	assert.NoError(t, err, "a live process's cgroup stays")
	_, err = os.Stat(held)
	assert.NoError(t, err, "a cgroup that still holds a process stays")
}
