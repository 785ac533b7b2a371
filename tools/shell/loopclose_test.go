package shell_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/shell"
)

// processesWith returns the pids of live processes whose argv holds s.
func processesWith(s string) []int {
	var out []int
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		var pid int
		fmt.Sscanf(n, "/proc/%d/cmdline", &pid)
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(st, ')'); err == nil && i > 0 && i+2 < len(st) && st[i+2] != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// TestLoopCloseEndsEscapedProcesses drives the shell tools from a scripted
// model through a real agent loop: a persistent shell and a background
// job start processes that leave their process group (setsid, GNU
// timeout, a new session from Python), and closing the loop must end
// all of them.
func TestLoopCloseEndsEscapedProcesses(t *testing.T) {
	// The shell's processes and the job's carry tags of their own, so
	// that each waits for its own processes (a shared tag let the job's
	// wait end on the shell's processes).
	newTag := func() (tag, setT string) {
		n, err := rand.Int(rand.Reader, big.NewInt(900000000))
		require.NoError(t, err)
		v := n.Int64() + 100000000
		// The command computes the tag, so that its own command line does
		// not hold it.
		return fmt.Sprintf("1000.%d", v), fmt.Sprintf("T=1000.$((%d+%d))", v/1000*1000, v%1000)
	}
	shellTag, setShellT := newTag()
	jobTag, setJobT := newTag()
	tags := []string{shellTag, jobTag}
	t.Cleanup(func() {
		for _, tag := range tags {
			for _, pid := range processesWith(tag) {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
		}
	})
	// waitFor waits until count processes carry tag.
	waitFor := func(tag string, count int) string {
		pattern := strings.Replace(tag, ".", "[.]", 1)
		return fmt.Sprintf(`until [ "$(grep -ls -e '%s' /proc/[0-9]*/cmdline | wc -l)" -ge %d ]; do sleep 0.01; done`, pattern, count)
	}
	// setsid's sleep, timeout and its sleep, and Python's sleep.
	inShell, inShellCount := setShellT+"; setsid sleep $T & timeout 1000 sleep $T &", 3
	if py, err := exec.LookPath("python3"); err == nil {
		// A version manager's shim is slow to start: ask where the
		// interpreter really is.
		if out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
			py = string(bytes.TrimSpace(out))
		}
		inShell += fmt.Sprintf(` %s -c 'import subprocess, sys; subprocess.Popen(["sleep", sys.argv[1]], start_new_session=True)' $T;`, py)
		inShellCount++
	} else {
		t.Log("python3 is not installed: the shell leaves only setsid and timeout behind")
	}
	inJob := setJobT + "; setsid sleep $T & (set -m; sleep $T &); " + waitFor(jobTag, 2) + "; echo up; sleep 1000.5"

	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	model := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "shell_open", map[string]any{})),
		replay.Call(replay.ToolCall("c2", "shell_send", map[string]any{"session_id": "sh1", "command": inShell + "\n" + waitFor(shellTag, inShellCount), "wait_ms": 60000})),
		replay.Call(replay.ToolCall("c3", "bash", map[string]any{"command": inJob, "run_in_background": true})),
		replay.Call(replay.ToolCall("c4", "bash_output", map[string]any{"job_id": "job1", "wait_ms": 0})),
		replay.Response{Text: "done"},
	)
	loop, err := agent.New(agent.WithModel(model), agent.WithTools(shell.Tools(shell.Config{Timeouts: shell.Timeouts{KillGrace: 300 * time.Millisecond}})...))
	require.NoError(t, err)
	defer loop.Close()
	sess, err := loop.NewSession(context.Background(), session.Header{Cwd: root})
	require.NoError(t, err)
	var results []string
	for ev, err := range sess.Run(context.Background(), "start things") {
		require.NoError(t, err)
		if end, ok := ev.(*agent.ToolCallEnd); ok {
			require.False(t, end.Result.IsError, end.Result.Text())
			results = append(results, end.Call.Name+": "+end.Result.Text())
			if end.Call.Name == "shell_open" || end.Call.Name == "bash" {
				require.Contains(t, end.Result.Text(), "[containment: ")
			}
		}
	}
	// Each waits for its processes, however slowly a loaded machine
	// starts them; the limit only ends a test that would never pass.
	for _, w := range []struct {
		tag  string
		want int
	}{{shellTag, inShellCount}, {jobTag, 2}} {
		deadline := time.Now().Add(2 * time.Minute)
		for len(processesWith(w.tag)) < w.want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		require.GreaterOrEqual(t, len(processesWith(w.tag)), w.want, "the escaped processes run before the loop closes: %s\nthe calls:\n%s",
			describe(tags), strings.Join(results, "\n"))
	}

	require.NoError(t, loop.Close())
	deadline := time.Now().Add(30 * time.Second)
	for len(describe(tags)) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Empty(t, describe(tags), "processes outlived Loop.Close")
}

// describe lists the live processes that carry any of tags, with their
// command lines.
func describe(tags []string) []string {
	var out []string
	for _, tag := range tags {
		for _, pid := range processesWith(tag) {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			out = append(out, fmt.Sprintf("pid %d: %s", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
	}
	return out
}
