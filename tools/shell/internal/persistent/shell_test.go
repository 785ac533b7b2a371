package persistent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/internal/longtest"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

func TestSessionPersistsState(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newKit(t, env)
	sub := filepath.Join(env.Cwd, "sub dir")
	require.NoError(t, os.Mkdir(sub, 0o755))
	id, _ := k.OpenShell(nil)
	assert.Equal(t, "sh1", id)

	res := k.Do(id, `cd "sub dir" && export EXPORTED=e1; PLAIN=p1; declare -a ARR=(a b c); greet() { echo "hello $1"; }; alias ll='echo aliased'`)
	require.False(t, res.IsError, res.Text())
	assert.Equal(t, "(no output)\n[exit code 0 · ", res.Text()[:len("(no output)\n[exit code 0 · ")])
	assert.Equal(t, "[cwd "+sub+"]", shelltest.LastLine(res.Text()), "the result ends with the new directory")
	assert.Equal(t, sub, res.Render.Terminal.Cwd)

	res = k.Do(id, "pwd; echo $EXPORTED $PLAIN ${ARR[2]}; greet world; bash -c 'echo child:$EXPORTED:$PLAIN'")
	require.False(t, res.IsError, res.Text())
	assert.True(t, strings.HasPrefix(res.Text(), sub+"\ne1 p1 c\nhello world\nchild:e1:\n[exit code 0"), res.Text())
	assert.Equal(t, "[cwd "+sub+"]", shelltest.LastLine(res.Text()))

	res = k.Do(id, "cd /; false")
	assert.False(t, res.IsError, "a non-zero exit is a normal result")
	assert.Contains(t, res.Text(), "[exit code 1 · ")
	assert.Equal(t, "[cwd /]", shelltest.LastLine(res.Text()))
	require.NotNil(t, res.Render.Terminal.ExitCode)
	assert.Equal(t, 1, *res.Render.Terminal.ExitCode)
	assert.Equal(t, "exited", res.Render.Terminal.Status)
	assert.Equal(t, "cd /; false", res.Render.Terminal.Command)
}

func TestSessionMarkerLookalikesDoNotEndCommand(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	fake := strings.Repeat("ab", 16)
	tests := []struct{ name, command, want string }{
		{"a marker with another nonce",
			fmt.Sprintf(`printf '\n\036%s 0 /elsewhere\036%s\n'; echo after`, fake, fake),
			"\n\x1e" + fake + " 0 /elsewhere\x1e" + fake + "\nafter\n"},
		{"the marker's start bytes",
			`printf 'x\n\036'; printf '\036\n'; echo after`,
			"x\n\x1e\x1e\nafter\n"},
		{"the marker's printf format", `echo "printf '\\n\\036%s %d %s\\036%s\\n'"; echo after`,
			"printf '\\n\\036%s %d %s\\036%s\\n'\nafter\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := k.Do(id, tc.command)
			require.False(t, res.IsError, res.Text())
			assert.Contains(t, res.Render.Terminal.Output, tc.want)
			assert.Contains(t, res.Text(), "[exit code 0")
			assert.Equal(t, "[cwd "+env.Cwd+"]", shelltest.LastLine(res.Text()))
		})
	}
}

func TestSessionMultiLineAndOddCommands(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	tests := []struct {
		name, command, output string
		code                  int
	}{
		{"multi-line", "for i in 1 2 3; do\n  echo \"line $i\"\ndone\nif true; then\n  echo yes\nfi", "line 1\nline 2\nline 3\nyes\n", 0},
		{"here-document", "cat <<'EOF'\nfirst $HOME\n  second\nEOF", "first $HOME\n  second\n", 0},
		{"unterminated quote", "echo 'oops", "unexpected EOF", 2},
		{"unterminated here-document", "cat <<EOF\nbody", "body\n", 0},
		{"trailing backslash", "echo a \\", "a \\\n", 0},
		{"no trailing newline", "printf abc", "abc", 0},
		{"quotes and backslashes", `echo "it's \"quoted\"" 'and \n raw' $'tab\there'`, "it's \"quoted\" and \\n raw tab\there\n", 0},
		{"control characters and UTF-8", "echo 'é ✓ \x01'", "é ✓ \x01\n", 0},
		{"break and return at top level", "break; return; echo still here", "still here\n", 0},
		{"stdin reads end at once", "cat; read line; echo read=$?", "read=1\n", 0},
		{"exit code of the last command", "true; (exit 42)", "", 42},
		{"redirected stdout still ends", "exec 3>&1 >/dev/null; echo hidden; exec >&3 3>&-; echo shown", "shown\n", 0},
		{"comment only", "# nothing", "", 0},
		{"long command", ": '" + strings.Repeat("x\n", 200000) + "'; echo long-done", "long-done\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := k.Do(id, tc.command)
			require.False(t, res.IsError, res.Text())
			assert.Contains(t, res.Render.Terminal.Output, tc.output)
			assert.Contains(t, res.Text(), fmt.Sprintf("[exit code %d · ", tc.code))
			require.NotNil(t, res.Render.Terminal.ExitCode)
			assert.Equal(t, tc.code, *res.Render.Terminal.ExitCode)
		})
	}
	res := k.Do(id, "echo alive")
	assert.True(t, strings.HasPrefix(res.Text(), "alive\n[exit code 0"), res.Text())
}

func TestSessionStillRunningAndIncrementalRead(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	gate := filepath.Join(env.Cwd, "go")
	res := k.Do(id, fmt.Sprintf("echo first; while [ ! -e %q ]; do sleep 0.02; done; echo second; exit_code=7; (exit $exit_code)", gate), 100)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "[still running after ")
	assert.Contains(t, res.Text(), `call shell_read (session_id "sh1")`)
	assert.Equal(t, "[cwd "+env.Cwd+"]", shelltest.LastLine(res.Text()))
	assert.Equal(t, "running", res.Render.Terminal.Status)
	assert.Nil(t, res.Render.Terminal.ExitCode)
	seen := res.Render.Terminal.Output

	busy := k.Do(id, "echo second command")
	require.True(t, busy.IsError)
	assert.Equal(t, harness.CodeBusy, busy.Code)
	assert.Contains(t, busy.Text(), "still running `echo first; while")
	assert.Contains(t, busy.Text(), "shell_read")
	assert.Contains(t, busy.Text(), "shell_close")

	// A short read returns what came since, without waiting for the end.
	shelltest.Eventually(t, func() bool {
		r := k.ReadOut(id, 10)
		seen += r.Render.Terminal.Output
		return strings.Contains(seen, "first")
	}, "the first line")
	assert.Equal(t, 1, strings.Count(seen, "first"), "output is returned once")

	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	res = k.ReadOut(id, 60000)
	require.False(t, res.IsError, res.Text())
	assert.Equal(t, "second\n", res.Render.Terminal.Output)
	assert.Contains(t, res.Text(), "second\n[exit code 7 · ")
	assert.Equal(t, "exited", res.Render.Terminal.Status)

	res = k.ReadOut(id)
	assert.Equal(t, "(no output)\n[no command running]\n[cwd "+env.Cwd+"]", res.Text())
	res = k.Do(id, "echo $exit_code")
	assert.True(t, strings.HasPrefix(res.Text(), "7\n"), res.Text())
}

func TestSessionBackgroundOutputBetweenCommands(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	gate := filepath.Join(env.Cwd, "gate")
	res := k.Do(id, fmt.Sprintf(`(while [ ! -e %q ]; do sleep 0.02; done; echo from-background) & echo "pid $!"`, gate))
	require.False(t, res.IsError, res.Text())
	require.Contains(t, res.Text(), "pid ")
	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	shelltest.Eventually(t, func() bool { return k.pending(id) == int64(len("from-background\n")) }, "the background output")
	res = k.Do(id, "echo foreground")
	assert.Equal(t, "[output printed since the last call, before this command:]\nfrom-background\n[output of this command:]\nforeground\n",
		res.Text()[:strings.Index(res.Text(), "[exit code")])
}

func TestSessionIdleReadCollects(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	res := k.Do(id, `(for i in 1 2 3; do echo tick$i; sleep 0.01; done) &`)
	require.False(t, res.IsError, res.Text())
	seen := res.Render.Terminal.Output // the first tick may come before the command ends
	shelltest.Eventually(t, func() bool {
		seen += k.ReadOut(id, 20).Render.Terminal.Output
		return strings.Contains(seen, "tick3")
	}, "the background output")
	assert.Equal(t, "tick1\ntick2\ntick3\n", seen)
}

func TestSessionCancelInterruptsCommand(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, pid := k.OpenShell(nil)
	k.Do(id, "KEEP=kept")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *harness.ToolResult, 1)
	tag := shelltest.SleepTag(t)
	go func() {
		done <- shelltest.Run(t, ctx, k.Send, env, map[string]any{"session_id": id, "command": "sleep " + tag + "; echo after-sleep"})
	}()
	// SIGINT must find the sleep running, not the shell about to start it.
	shelltest.RequireTagged(t, tag)
	cancel()
	res := <-done
	require.True(t, res.IsError)
	assert.Equal(t, harness.CodeAborted, res.Code)
	assert.Contains(t, res.Text(), "[the call was cancelled: the command was interrupted with SIGINT]")
	assert.Contains(t, res.Text(), "after-sleep", "the interrupted sleep ends; the rest of the command runs")
	assert.Equal(t, "cancelled", res.Render.Terminal.Status)
	assert.True(t, shelltest.PidAlive(pid), "the shell survives")

	res = k.Do(id, "echo $KEEP")
	assert.True(t, strings.HasPrefix(res.Text(), "kept\n[exit code 0"), res.Text())
}

func TestSessionCloseStopsProcessGroup(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newKit(t, env, grace(300*time.Millisecond))
	id, pid := k.OpenShell(nil)
	tag := shelltest.SleepTag(t)
	k.Do(id, "sleep "+tag+" & (trap '' TERM; touch trapped; exec sleep "+tag+") &")
	shelltest.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(env.Cwd, "trapped")); return err == nil }, "the trap")
	k.Do(id, "echo left-over-output", 0)
	res := shelltest.Run(t, context.Background(), k.Close, env, map[string]any{"session_id": id})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "[closed shell sh1; ")
	assert.Contains(t, res.Text(), "its processes were sent SIGTERM, did not all end in time and were killed with SIGKILL]\n[containment: ")
	shelltest.RequireGone(t, pid)
	shelltest.RequireNoTagged(t, tag)

	res = k.Do(id, "echo again")
	require.True(t, res.IsError)
	assert.Equal(t, harness.CodeNotFound, res.Code)
	assert.Contains(t, res.Text(), "Shell sh1 is closed (closed with shell_close). Open a new one with shell_open")
	res = k.ReadOut("sh9")
	assert.Equal(t, harness.CodeNotFound, res.Code)
	assert.Contains(t, res.Text(), `There is no shell "sh9"`)
}

func TestSessionDeathIsReportedAndNextSendStartsFresh(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	rec := shelltest.RecordsOf(t, env)
	k := newKit(t, env)
	sub := filepath.Join(env.Cwd, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	id, pid := k.OpenShell(map[string]any{"cwd": "sub"})
	tag := shelltest.SleepTag(t)
	k.Do(id, "VAR=set; cd /; sleep "+tag+" &")
	shelltest.RequireTagged(t, tag)

	res := k.Do(id, "echo bye; exit 7")
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "bye\n[The shell exited with code 7 while running `echo bye; exit 7`. Its variables, functions and background processes are gone. The next shell_send starts a fresh shell in "+sub+".]")
	assert.Equal(t, "[cwd "+sub+"]", shelltest.LastLine(res.Text()))
	assert.Equal(t, "killed", res.Render.Terminal.Status)
	shelltest.RequireGone(t, pid)
	shelltest.RequireNoTagged(t, tag)

	res = k.ReadOut(id)
	assert.Contains(t, res.Text(), "[The shell exited with code 7", "a read says so too")

	res = k.Do(id, `echo "VAR=${VAR-unset}"; pwd`)
	require.False(t, res.IsError, res.Text())
	assert.True(t, strings.HasPrefix(res.Text(), "[The shell exited with code 7 while running `echo bye; exit 7`. This command runs in a fresh shell started in "+sub+": variables, functions and background processes from before are gone.]\n"), res.Text())
	assert.Contains(t, res.Text(), "VAR=unset\n"+sub+"\n[exit code 0")

	recs := rec.All()
	require.Len(t, recs, 2)
	assert.Equal(t, "shell_open", recs[1].Name)
	assert.Contains(t, string(recs[1].Data), `"restart":true`)
}

func TestSessionKilledShell(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, pid := k.OpenShell(nil)
	require.NoError(t, shelltest.KillPID(pid))
	shelltest.Eventually(t, func() bool {
		return strings.Contains(k.ReadOut(id).Text(), "[The shell was killed by SIGKILL. ")
	}, "the death to be noticed")
	res := k.Do(id, "echo fresh")
	assert.Contains(t, res.Text(), "fresh\n[exit code 0")
}

func TestSessionOpenRecordsSettings(t *testing.T) {
	env := shelltest.Env(t)
	rec := shelltest.RecordsOf(t, env)
	k := newKit(t, env, sandbox(&shelltest.EnvSandbox{}), func(c *shellkit.Config) { c.Env = []string{"EXTRA=1"}; c.Idle = time.Hour })
	id, pid := k.OpenShell(nil)
	res := k.Do(id, "echo $SANDBOXED $EXTRA $PAGER")
	assert.True(t, strings.HasPrefix(res.Text(), "yes 1 cat\n"), res.Text())
	recs := rec.All()
	require.Len(t, recs, 1)
	assert.Equal(t, "shell_open", recs[0].Tool)
	assert.Equal(t, "shell_open", recs[0].Name)
	var got openRecord
	require.NoError(t, json.Unmarshal(recs[0].Data, &got))
	assert.Equal(t, "sh1", got.SessionID)
	assert.Equal(t, env.Cwd, got.Dir)
	assert.Equal(t, "env marker", got.Sandbox)
	assert.Equal(t, "process", got.Inherit)
	assert.Equal(t, pid, got.PID)
	assert.Equal(t, shellkit.Defaults().Containment().String(), got.Containment)
	assert.Equal(t, time.Hour.Milliseconds(), got.IdleTimeoutMS)
	assert.Equal(t, []string{"env", "SANDBOXED=yes"}, got.Argv[:2])
	assert.Contains(t, got.Env, "PAGER=cat")
	assert.Contains(t, got.Env, "EXTRA=1")
	for _, kv := range got.Env {
		assert.False(t, strings.HasPrefix(kv, "PATH="), "inherited variables are not logged")
	}
}

func TestSessionOpenErrors(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env, func(c *shellkit.Config) { c.MaxShells = 2 })
	k.OpenShell(nil)
	k.OpenShell(nil)
	res := shelltest.Run(t, context.Background(), k.Open, env, map[string]any{})
	require.True(t, res.IsError)
	assert.Equal(t, shellkit.CodeTooManyShells, res.Code)
	assert.Contains(t, res.Text(), "2 shells are open already (sh1, sh2)")

	res = shelltest.Run(t, context.Background(), k.Open, env, map[string]any{"cwd": "/"})
	assert.Equal(t, shellkit.CodeBadWorkdir, res.Code, "cwd is confined to the root")

	k2 := newKit(t, env, sandbox(&shelltest.EnvSandbox{Deny: true}))
	res = shelltest.Run(t, context.Background(), k2.Open, env, map[string]any{})
	assert.Equal(t, shellkit.CodeSandboxDenied, res.Code)

	k3 := newKit(t, env, func(c *shellkit.Config) { c.Shell = "false" })
	res = shelltest.Run(t, context.Background(), k3.Open, env, map[string]any{})
	require.True(t, res.IsError)
	assert.Equal(t, shellkit.CodeNoShell, res.Code)
	assert.Contains(t, res.Text(), "The shell could not be opened: the shell did not start: The shell exited with code 1.")
}

func TestSessionIdleReaper(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newKit(t, env, func(c *shellkit.Config) { c.Idle = 150 * time.Millisecond })
	id, pid := k.OpenShell(nil)
	tag := shelltest.SleepTag(t)
	k.Do(id, "sleep "+tag+" &")
	shelltest.Eventually(t, func() bool { return !shelltest.PidAlive(pid) }, "the idle shell to be reaped")
	shelltest.RequireNoTagged(t, tag)
	res := k.Do(id, "echo hi")
	assert.Equal(t, harness.CodeNotFound, res.Code)
	assert.Contains(t, res.Text(), "closed after 150 ms without use")
}

func TestSessionStateCloseReapsEverything(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newKit(t, env)
	tag := shelltest.SleepTag(t)
	var pids []int
	for range 3 {
		id, pid := k.OpenShell(nil)
		k.Do(id, "sleep "+tag+" &")
		pids = append(pids, pid)
	}
	id, pid := k.OpenShell(nil)
	res := k.Do(id, "sleep "+tag, 0)
	assert.Contains(t, res.Text(), "still running")
	pids = append(pids, pid)
	shelltest.Eventually(t, func() bool { return len(shelltest.Tagged(tag)) == 4 }, "the four sleeps")

	require.NoError(t, env.State.Close())
	shelltest.RequireGone(t, pids...)
	shelltest.RequireNoTagged(t, tag)
	res = k.Do(id, "echo hi")
	require.True(t, res.IsError)
	assert.Equal(t, harness.CodeAborted, res.Code)
}

// TestSessionHundredOpenedAndKilled opens and ends a hundred shells (30
// unless HARNESS_LONG_TESTS=1: each costs a PID namespace).
func TestSessionHundredOpenedAndKilled(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newKit(t, env, func(c *shellkit.Config) { c.MaxShells = 3; c.Grace = time.Second })
	tag := shelltest.SleepTag(t)
	n := 30
	if os.Getenv("HARNESS_LONG_TESTS") == "1" {
		n = 100
	}
	var pids []int
	for i := range n {
		id, pid := k.OpenShell(nil)
		res := k.Do(id, "sleep "+tag+" &")
		require.False(t, res.IsError, res.Text())
		pids = append(pids, pid)
		if i%2 == 0 {
			res = shelltest.Run(t, context.Background(), k.Close, env, map[string]any{"session_id": id})
			require.False(t, res.IsError, res.Text())
		} else {
			require.NoError(t, shelltest.KillPID(pid))
			shelltest.Eventually(t, func() bool { return strings.Contains(k.ReadOut(id).Text(), "killed by SIGKILL") }, "the death")
			shelltest.Run(t, context.Background(), k.Close, env, map[string]any{"session_id": id})
		}
	}
	require.Len(t, pids, n)
	shelltest.RequireGone(t, pids...)
	shelltest.RequireNoTagged(t, tag)
}

func TestSessionLongOutputSpilled(t *testing.T) {
	env := shelltest.Env(t)
	store := env.Output.(*shelltest.DirStore)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	res := k.Do(id, "seq 1 100000; echo err >&2")
	require.False(t, res.IsError, res.Text())
	text := res.Text()
	assert.Less(t, len(text), shellkit.DefaultOutputLimit+2000)
	assert.True(t, strings.HasPrefix(text, "1\n2\n3\n"))
	assert.Contains(t, text, "100000\nerr\n[The whole output (575.1 KiB, 100001 lines) is saved as spill://out1")
	assert.Contains(t, text, "[exit code 0")
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	want.WriteString("err\n")
	assert.Equal(t, want.String(), store.Read(t, "spill://out1"))
	assert.Equal(t, "shell_send", store.Owners()[0].Tool)
}

func TestSessionGigabyteBoundedMemory(t *testing.T) {
	// 128 MiB by default, twice what the heap may hold; 1 GiB in the
	// long runs.
	size := longtest.Pick[int64](128<<20, 1<<30)
	env := shelltest.Env(t)
	store := &shelltest.CountStore{}
	env.Output = store
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	peak := shelltest.HeapPeak(t)
	res := k.Do(id, fmt.Sprintf("yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c %d", size), 600000)
	max := peak()
	require.False(t, res.IsError)
	text := res.Text()
	// 37-byte lines; the last one is cut.
	assert.Contains(t, text, fmt.Sprintf("The whole output (%s, %d lines) is saved as spill://count1", units.Bytes(size), size/37))
	assert.Contains(t, text, "[exit code 0")
	rec, ok := store.Get("spill://count1")
	require.True(t, ok)
	assert.Equal(t, size, rec.Size)
	t.Logf("%s streamed, peak heap in use: %.1f MiB", units.Bytes(size), float64(max)/(1<<20))
	assert.Less(t, max, uint64(64<<20), "memory stays bounded")
}

// TestSessionResultStaysBounded: earlier background output and a long
// command output share one budget, so the result stays far below the
// spill middleware's threshold.
func TestSessionResultStaysBounded(t *testing.T) {
	env := shelltest.Env(t)
	store := env.Output.(*shelltest.DirStore)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	k.Do(id, `(while [ ! -e gate ]; do sleep 0.02; done; seq 1 30000) &`)
	require.NoError(t, os.WriteFile(filepath.Join(env.Cwd, "gate"), nil, 0o644))
	shelltest.Eventually(t, func() bool { return k.pending(id) == 168894 }, "the background output")
	res := k.Do(id, "seq 1 30000")
	text := res.Text()
	assert.Less(t, len(text), shellkit.DefaultOutputLimit+3000)
	assert.Contains(t, text, "[output printed since the last call, before this command:]\n")
	assert.Contains(t, text, "[output of this command:]\n1\n2\n")
	assert.Contains(t, text, "\n30000\n[The whole output (164.9 KiB, 30000 lines) is saved as spill://out2")
	assert.Contains(t, text, "[exit code 0")
	var want strings.Builder
	for i := 1; i <= 30000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	assert.Equal(t, want.String(), store.Read(t, "spill://out2"))
	assert.True(t, strings.HasPrefix(store.Read(t, "spill://out1"), "1\n2\n"), "the background output was saved too")
}

func TestSessionSetEEndsShellAndIsReported(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	res := k.Do(id, "set -e; false; echo not-reached")
	assert.NotContains(t, res.Render.Terminal.Output, "not-reached")
	assert.Contains(t, res.Text(), "[The shell exited with code 1 while running `set -e; false; echo not-reached`.")
	res = k.Do(id, "false; echo reached")
	assert.Contains(t, res.Text(), "fresh shell")
	assert.Contains(t, res.Text(), "reached\n[exit code 0", "the fresh shell has no set -e")
}

// TestSessionOutputBelongsToItsCommand: a command's output, with or
// without a final newline, ending in bytes that start a sync record, or
// large enough to need several reads, is all in its own result and none
// in the next one, whether its end was found by the drained pipe or by a
// sync record.
func TestSessionOutputBelongsToItsCommand(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	for i := range 60 {
		var command, want string
		switch i % 4 {
		case 0:
			command, want = fmt.Sprintf("printf %%s out%d", i), fmt.Sprintf("out%d", i)
		case 1:
			command, want = fmt.Sprintf("echo line%d", i), fmt.Sprintf("line%d\n", i)
		case 2:
			command, want = fmt.Sprintf(`printf 'rs%d\036'`, i), fmt.Sprintf("rs%d\x1e", i)
		default:
			command, want = fmt.Sprintf("head -c 15000 /dev/zero | tr '\\0' y; echo end%d", i), strings.Repeat("y", 15000)+fmt.Sprintf("end%d\n", i)
		}
		res := k.Do(id, command)
		require.False(t, res.IsError, res.Text())
		// The result ends the output with a newline when it has none.
		require.Equal(t, strings.TrimSuffix(want, "\n")+"\n", res.Render.Terminal.Output, "command %d", i)
	}
}
