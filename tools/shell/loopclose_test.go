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
	n, err := rand.Int(rand.Reader, big.NewInt(900000000))
	require.NoError(t, err)
	v := n.Int64() + 100000000
	tag := fmt.Sprintf("1000.%d", v)
	t.Cleanup(func() {
		for _, pid := range processesWith(tag) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
	// The command computes the tag, so that the shell's own command line
	// does not hold it, and waits until count processes carry it.
	setT := fmt.Sprintf("T=1000.$((%d+%d))", v/1000*1000, v%1000)
	pattern := strings.Replace(tag, ".", "[.]", 1)
	waitFor := func(count int) string {
		return fmt.Sprintf(`until [ "$(grep -ls -e '%s' /proc/[0-9]*/cmdline | wc -l)" -ge %d ]; do sleep 0.01; done`, pattern, count)
	}
	inShell := setT + "; setsid sleep $T & timeout 1000 sleep $T &"
	if py, err := exec.LookPath("python3"); err == nil {
		// A version manager's shim is slow to start: ask where the
		// interpreter really is.
		if out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
			py = string(bytes.TrimSpace(out))
		}
		inShell += fmt.Sprintf(` %s -c 'import subprocess, sys; subprocess.Popen(["sleep", sys.argv[1]], start_new_session=True)' $T;`, py)
	} else {
		t.Log("python3 is not installed: the shell leaves only setsid and timeout behind")
	}
	inJob := setT + "; setsid sleep $T & (set -m; sleep $T &); " + waitFor(1) + "; echo up; sleep 1000.5"

	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	model := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "shell_open", map[string]any{})),
		replay.Call(replay.ToolCall("c2", "shell_send", map[string]any{"session_id": "sh1", "command": inShell + "\n" + waitFor(3), "wait_ms": 60000})),
		replay.Call(replay.ToolCall("c3", "bash", map[string]any{"command": inJob, "run_in_background": true})),
		replay.Call(replay.ToolCall("c4", "bash_output", map[string]any{"job_id": "job1", "wait_ms": 0})),
		replay.Response{Text: "done"},
	)
	loop, err := agent.New(agent.WithModel(model), agent.WithTools(shell.Tools(shell.Config{Timeouts: shell.Timeouts{KillGrace: 300 * time.Millisecond}})...))
	require.NoError(t, err)
	defer loop.Close()
	sess, err := loop.NewSession(context.Background(), session.Header{Cwd: root})
	require.NoError(t, err)
	for ev, err := range sess.Run(context.Background(), "start things") {
		require.NoError(t, err)
		if end, ok := ev.(*agent.ToolCallEnd); ok {
			require.False(t, end.Result.IsError, end.Result.Text())
			if end.Call.Name == "shell_open" || end.Call.Name == "bash" {
				require.Contains(t, end.Result.Text(), "[containment: ")
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(processesWith(tag)) < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.GreaterOrEqual(t, len(processesWith(tag)), 5, "the escaped processes run before the loop closes")

	require.NoError(t, loop.Close())
	deadline = time.Now().Add(3 * time.Second)
	for len(processesWith(tag)) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var left []string
	for _, pid := range processesWith(tag) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		left = append(left, fmt.Sprintf("pid %d: %s", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	require.Empty(t, left, "processes outlived Loop.Close")
}
