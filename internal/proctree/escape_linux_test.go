package proctree

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// tagged lists the processes whose command line holds tag.
func tagged(tag string) []int {
	pids, _ := allPIDs()
	var out []int
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(tag)) {
			if st, ok := readStat(pid); ok && st.live() {
				out = append(out, pid)
			}
		}
	}
	return out
}

// probed returns every containment this machine allows, each probed
// once: the default, a PID namespace when the default is a cgroup, and
// the process tree.
func probed(t *testing.T) []*Containment {
	def := Probe(Options{})
	cs := []*Containment{def}
	if def.Cgroup() {
		cs = append(cs, Probe(Options{NoCgroup: true}))
	} else {
		t.Logf("no cgroup containment here: each command gets a %s", def)
	}
	return append(cs, Probe(Options{NoNamespace: errors.New("forced")}))
}

// TestStopReachesSetsidGrandchild: a grandchild that starts a session of
// its own and ignores SIGTERM ends with the command, in a PID namespace
// and in the process tree.
func TestStopReachesSetsidGrandchild(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	for _, c := range probed(t) {
		t.Run(c.String(), func(t *testing.T) {
			leakcheck.Check(t)
			var nonce [6]byte
			_, _ = rand.Read(nonce[:])
			tag := "harness-escapee-" + hex.EncodeToString(nonce[:])
			// The tag reaches the grandchild's command line through the
			// environment, so that only the grandchild's holds it.
			script := `setsid bash -c 'trap "" TERM; exec -a "$TAG" sleep 300' </dev/null >/dev/null 2>&1 & sleep 300`
			p, err := Start(c, Command{Argv: []string{"bash", "-c", script}, Dir: "/", Env: []string{"PATH=" + os.Getenv("PATH"), "TAG=" + tag}, Stdout: null, Stderr: null})
			require.NoError(t, err)
			t.Cleanup(func() { p.Stop(0) })
			deadline := time.Now().Add(time.Minute)
			for len(tagged(tag)) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			escapees := tagged(tag)
			require.Len(t, escapees, 1, "the grandchild runs")
			out := p.Stop(200 * time.Millisecond)
			assert.Empty(t, out.Survivors)
			assert.Equal(t, "SIGKILL", out.Signal, "the grandchild ignores SIGTERM")
			assert.Empty(t, tagged(tag), "no survivor")
			st, ok := readStat(escapees[0])
			assert.True(t, !ok || !st.live(), "pid %d has ended (its parent may not have reaped it yet)", escapees[0])
			assert.Equal(t, !c.Namespace(), p.Partial())
			assert.Equal(t, c.String(), p.How()[:len(c.String())])
		})
	}
}

// TestStdin: the command reads the standard input it is given, in a PID
// namespace as in the process tree, and sees its end.
func TestStdin(t *testing.T) {
	for _, c := range probed(t) {
		t.Run(c.String(), func(t *testing.T) {
			leakcheck.Check(t)
			inR, inW, err := os.Pipe()
			require.NoError(t, err)
			outR, outW, err := os.Pipe()
			require.NoError(t, err)
			p, err := Start(c, Command{Argv: []string{"cat"}, Dir: "/", Env: []string{"PATH=" + os.Getenv("PATH")}, Stdin: inR, Stdout: outW})
			inR.Close()
			outW.Close()
			require.NoError(t, err)
			_, err = inW.WriteString("through the pipe\n")
			require.NoError(t, err)
			inW.Close()
			got, err := io.ReadAll(outR)
			require.NoError(t, err)
			outR.Close()
			assert.Equal(t, "through the pipe\n", string(got))
			<-p.MainDone()
			code, _ := p.ExitInfo()
			require.NotNil(t, code)
			assert.Equal(t, 0, *code)
			p.Stop(time.Second)
		})
	}
}

// TestInitCommand: a command started as its namespace's own init
// (Command.Init) reports its own exit status, leaves nothing running
// when it ends (the kernel ends the namespace with it), and is reported
// as having left nothing; a stop reaches a grandchild that started a
// session of its own and ignores SIGTERM.
func TestInitCommand(t *testing.T) {
	c := Probe(Options{})
	if !c.Namespace() {
		t.Skipf("no PID namespace here: %s", c)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	leakcheck.Check(t)
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	tag := "harness-init-" + hex.EncodeToString(nonce[:])
	env := []string{"PATH=" + os.Getenv("PATH"), "TAG=" + tag}
	escape := `setsid bash -c 'trap "" TERM; exec -a "$TAG" sleep 300' </dev/null >/dev/null 2>&1 & `
	wait := func() {
		deadline := time.Now().Add(time.Minute)
		for len(tagged(tag)) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		require.Len(t, tagged(tag), 1, "the grandchild runs")
	}

	// It ends by itself, with status 3, while the grandchild runs.
	p, err := Start(c, Command{Argv: []string{"bash", "-c", escape + `while [ -z "$(ps -eo args | grep -F "$TAG" | grep -v grep)" ]; do sleep 0.01; done; exit 3`}, Dir: "/", Env: env, Stdout: null, Stderr: null, Init: true})
	require.NoError(t, err)
	<-p.MainDone()
	code, sig := p.ExitInfo()
	require.NotNil(t, code, sig)
	assert.Equal(t, 3, *code)
	left, out := p.ReapLeftovers(time.Second)
	assert.False(t, left, "nothing is left once the init has ended")
	assert.Empty(t, out.Survivors)
	assert.Empty(t, tagged(tag), "the kernel ended the namespace with its init")
	assert.Equal(t, "pid namespace", p.How(), "a command that is its own init runs in a PID namespace, under any containment")

	// A stop, of an init that outlives SIGTERM to its children.
	p, err = Start(c, Command{Argv: []string{"bash", "-c", escape + "while :; do sleep 0.05; done"}, Dir: "/", Env: env, Stdout: null, Stderr: null, Init: true})
	require.NoError(t, err)
	t.Cleanup(func() { p.Stop(0) })
	wait()
	out = p.Stop(200 * time.Millisecond)
	assert.Empty(t, out.Survivors)
	assert.Equal(t, "SIGKILL", out.Signal, "the grandchild ignores SIGTERM, and the init starts more")
	assert.Empty(t, tagged(tag), "no survivor")
}
