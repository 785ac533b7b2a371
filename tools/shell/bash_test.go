package shell

import (
	"context"
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
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/persistent"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

func TestBashSpecs(t *testing.T) {
	for _, ts := range [][]tools.Tool{{Bash(Config{})}, bashWithJobs(Config{}.resolve()), persistent.Tools(Config{}.resolve()), Tools(Config{})} {
		reg, err := tools.NewRegistry(ts...)
		require.NoError(t, err)
		for _, s := range reg.Specs() {
			assert.Equal(t, harness.RenderTerminal, s.Render, s.Name)
			assert.Equal(t, tools.FamilyProcess, s.Family, s.Name)
			assert.Greater(t, s.Deadline, time.Duration(0), s.Name)
		}
	}
	spec := Bash(Config{}).Spec()
	assert.Contains(t, spec.Description, "vim")
	assert.Contains(t, spec.Description, "No full-screen programs")
	assert.Contains(t, spec.Description, "spill://")
	assert.Contains(t, spec.Description, "the directory")
	assert.Greater(t, spec.Deadline, shellkit.DefaultMaxTimeout, "the dispatcher's backstop sits above the tool's own timeout")
	assert.NotContains(t, string(spec.InputSchema), "run_in_background")
	assert.Contains(t, string(bashWithJobs(Config{}.resolve())[0].Spec().InputSchema), "run_in_background")
	for _, s := range persistent.Tools(Config{}.resolve()) {
		d := s.Spec().Description
		if s.Spec().Name == "shell_open" {
			assert.Contains(t, d, "fixed when it opens")
			assert.Contains(t, d, "no full-screen programs")
		}
		if s.Spec().Name == "shell_send" {
			assert.Contains(t, d, "shell_read")
			assert.Contains(t, d, "exit code and directory")
		}
	}
}

func TestBashOutputAndExitCode(t *testing.T) {
	env := shelltest.Env(t)
	tests := []struct {
		name    string
		command string
		want    []string
		code    int
	}{
		{"stdout only", "echo hello", []string{"hello\n[exit code 0 · "}, 0},
		{"stderr kept apart", "echo out; echo err >&2; echo out2", []string{"out\nout2\n[stderr]\nerr\n[exit code 0"}, 0},
		{"non-zero exit", "echo failing >&2; exit 3", []string{"[stderr]\nfailing\n", "[exit code 3 · "}, 3},
		{"no output", "true", []string{"(no output)\n[exit code 0"}, 0},
		{"no trailing newline", "printf abc", []string{"abc\n[exit code 0"}, 0},
		{"multi-line", "for i in 1 2; do\n  echo line$i\ndone", []string{"line1\nline2\n"}, 0},
		{"stdin is closed", "cat; read x; echo read=$?", []string{"read=1\n"}, 0},
		{"not a terminal", "[ -t 0 ] || echo no-tty; [ -t 1 ] || echo no-tty-out", []string{"no-tty\nno-tty-out\n"}, 0},
		{"progress bar", `printf '10%%\r50%%\r100%%\n'; printf '\033[31mred\033[0m\n'`, []string{"100%\nred\n"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": tc.command, "description": tc.name})
			require.False(t, res.IsError, res.Text())
			for _, w := range tc.want {
				assert.Contains(t, res.Text(), w)
			}
			assert.Equal(t, "[cwd "+env.Cwd+"]", shelltest.LastLine(res.Text()))
			require.NotNil(t, res.Render)
			term := res.Render.Terminal
			require.NotNil(t, term)
			assert.Equal(t, harness.RenderTerminal, res.Render.Kind)
			assert.Equal(t, tc.name, res.Render.Title)
			assert.Equal(t, tc.command, term.Command)
			assert.Equal(t, env.Cwd, term.Cwd)
			assert.Equal(t, "exited", term.Status)
			require.NotNil(t, term.ExitCode)
			assert.Equal(t, tc.code, *term.ExitCode)
		})
	}
}

func TestBashEnvironment(t *testing.T) {
	env := shelltest.Env(t)
	rc := filepath.Join(env.Cwd, "rc")
	require.NoError(t, os.WriteFile(rc, []byte("echo SOURCED\n"), 0o644))
	tool := Bash(Config{
		BaseEnv: []string{"PATH=" + os.Getenv("PATH"), "BASH_ENV=" + rc, "ENV=" + rc, "PAGER=less", "KEEP=me"},
		Env:     []string{"EXTRA=1", "TERM=xterm-override"},
	})
	res := shelltest.Run(t, context.Background(), tool, env, map[string]any{
		"command": `echo "$PAGER|$GIT_PAGER|$TERM|$NO_COLOR|$GIT_EDITOR|$EDITOR|$GIT_TERMINAL_PROMPT|$KEEP|$EXTRA|${BASH_ENV-unset}"; shopt -q login_shell || echo not-login; [[ $- == *i* ]] || echo not-interactive`,
	})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "cat|cat|xterm-override|1|false|false|0|me|1|unset\nnot-login\nnot-interactive\n")
	assert.NotContains(t, res.Text(), "SOURCED", "no rc file is read")
}

func TestBashWorkdir(t *testing.T) {
	env := shelltest.Env(t)
	sub := filepath.Join(env.Cwd, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(env.Cwd, "file"), nil, 0o644))
	t.Run("relative", func(t *testing.T) {
		res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": "pwd", "workdir": "sub"})
		require.False(t, res.IsError, res.Text())
		assert.True(t, strings.HasPrefix(res.Text(), sub+"\n"), res.Text())
		assert.Equal(t, "[cwd "+sub+"]", shelltest.LastLine(res.Text()))
	})
	t.Run("absolute", func(t *testing.T) {
		res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": "pwd", "workdir": sub})
		assert.True(t, strings.HasPrefix(res.Text(), sub+"\n"), res.Text())
	})
	for name, dir := range map[string]string{"outside the root": "..", "absolute outside": "/", "missing": "nope", "a file": "file"} {
		t.Run(name, func(t *testing.T) {
			res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": "touch made-it", "workdir": dir})
			require.True(t, res.IsError)
			assert.Equal(t, CodeBadWorkdir, res.Code)
			assert.Contains(t, res.Text(), "directory")
		})
	}
	_, err := os.Stat(filepath.Join(env.Cwd, "made-it"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused workdir runs nothing")

	t.Run("without a local file system", func(t *testing.T) {
		e := *env
		e.FS = nil
		res := shelltest.Run(t, context.Background(), Bash(Config{}), &e, map[string]any{"command": "pwd", "workdir": "/"})
		require.False(t, res.IsError, res.Text())
		assert.True(t, strings.HasPrefix(res.Text(), "/\n"), res.Text())
	})
	t.Run("without a file system or a working directory", func(t *testing.T) {
		for _, cwd := range []string{"", "/"} {
			e := *env
			e.FS, e.Cwd = nil, cwd
			for _, tool := range []tools.Tool{Bash(Config{}), bashWithJobs(Config{}.resolve())[0]} {
				res := shelltest.Run(t, context.Background(), tool, &e, map[string]any{"command": "pwd"})
				require.True(t, res.IsError, res.Text())
				assert.Equal(t, CodeBadWorkdir, res.Code)
				assert.Contains(t, res.Text(), "agent.Stores.Files")
				assert.Contains(t, res.Text(), "session.Header.Cwd")
			}
		}
	})
}

func TestBashInvalidArguments(t *testing.T) {
	env := shelltest.Env(t)
	for name, args := range map[string]map[string]any{
		"empty":            {"command": "  "},
		"nul":              {"command": "echo \x00"},
		"negative timeout": {"command": "true", "timeout_ms": -1},
		"unknown field":    {"command": "true", "shell": "zsh"},
	} {
		t.Run(name, func(t *testing.T) {
			res := shelltest.Run(t, context.Background(), Bash(Config{}), env, args)
			require.True(t, res.IsError)
			assert.Equal(t, harness.CodeInvalidArguments, res.Code, res.Text())
		})
	}
}

func TestBashTimeoutKillsWholeGroup(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	tool := Bash(Config{Timeouts: Timeouts{KillGrace: time.Second}})
	a, b := shelltest.SleepTag(t), shelltest.SleepTag(t)
	res := shelltest.Run(t, context.Background(), tool, env, map[string]any{
		"command":    "sleep " + a + " & (sleep " + b + "; echo never) & echo started; wait",
		"timeout_ms": 300,
	})
	require.True(t, res.IsError)
	assert.Equal(t, harness.CodeTimeout, res.Code)
	text := res.Text()
	assert.Contains(t, text, "started\n")
	assert.Contains(t, text, "[timed out after 300 ms: its processes were sent SIGTERM and ended")
	assert.Contains(t, text, "[containment: ")
	assert.NotContains(t, text, "never")
	assert.Equal(t, "timeout", res.Render.Terminal.Status)
	assert.Nil(t, res.Render.Terminal.ExitCode)
	shelltest.RequireNoTagged(t, a)
	shelltest.RequireNoTagged(t, b)
}

func TestBashTimeoutEscalatesToSIGKILL(t *testing.T) {
	env := shelltest.Env(t)
	tool := Bash(Config{Timeouts: Timeouts{KillGrace: 200 * time.Millisecond}})
	tag := shelltest.SleepTag(t)
	res := shelltest.Run(t, context.Background(), tool, env, map[string]any{
		// An ignored signal stays ignored in children: nothing here
		// ends on SIGTERM.
		"command":    "trap '' TERM; sleep " + tag + " & wait",
		"timeout_ms": 200,
	})
	require.True(t, res.IsError)
	assert.Contains(t, res.Text(), "did not all end in time and were killed with SIGKILL")
	shelltest.RequireNoTagged(t, tag)
}

func TestBashTimeoutClamped(t *testing.T) {
	env := shelltest.Env(t)
	tool := Bash(Config{Timeouts: Timeouts{MaxCommand: 300 * time.Millisecond}})
	res := shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "sleep 300", "timeout_ms": 3600000})
	require.True(t, res.IsError)
	assert.Contains(t, res.Text(), "timed out after 300 ms")
}

func TestConfigRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Timeouts: Timeouts{Command: time.Minute, MaxCommand: 300 * time.Millisecond}}, "the Command timeout (1m0s) is above the maximum"},
		{Config{Timeouts: Timeouts{Command: -time.Second}}, "Config.Timeouts {Command:-1s "},
		{Config{Timeouts: Timeouts{Send: time.Minute, MaxWait: time.Second}}, "the Send wait (1m0s) is above the maximum"},
		{Config{Timeouts: Timeouts{Read: time.Minute, MaxWait: time.Second}}, "the Read wait (1m0s) is above the maximum"},
		{Config{Timeouts: Timeouts{MaxWait: -1}}, "timeouts must not be negative"},
		{Config{Timeouts: Timeouts{KillGrace: -1}}, "timeouts must not be negative"},
		{Config{Timeouts: Timeouts{Idle: -1}}, "timeouts must not be negative"},
		{Config{Limits: Limits{Output: 1000}}, "Config.Limits {Output:1000 "},
		{Config{Limits: Limits{Output: -1}}, "Output is at least 1024 bytes"},
		{Config{Limits: Limits{Saved: -1}}, "limits must not be negative"},
		{Config{Limits: Limits{Shells: -1}}, "limits must not be negative"},
		{Config{Limits: Limits{Jobs: -1}}, "limits must not be negative"},
		{Config{Env: []string{"NOEQUALS"}}, `Config.Env entry "NOEQUALS"`},
		{Config{Env: []string{"=x"}}, `Config.Env entry "=x"`},
		{Config{PassEnv: []string{"BAD NAME"}}, `Config.PassEnv entry "BAD NAME"`},
		{Config{PassEnv: []string{"A*B"}}, `Config.PassEnv entry "A*B"`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			for _, tool := range Tools(tc.cfg) {
				_, err := tools.NewRegistry(tool)
				require.Error(t, err, tool.Spec().Name)
				assert.ErrorIs(t, err, harness.CodeInvalidOption)
				assert.Contains(t, err.Error(), tc.want)
			}
			_, err := tools.NewRegistry(Bash(tc.cfg))
			assert.ErrorIs(t, err, harness.CodeInvalidOption)
		})
	}
	// Good values, and a maximum below a default the caller did not set.
	_, err := tools.NewRegistry(Tools(Config{Timeouts: Timeouts{MaxCommand: time.Second, MaxWait: time.Second}, Limits: Limits{Output: 1024}})...)
	assert.NoError(t, err)
	_, err = tools.NewRegistry(Bash(Config{Timeouts: Timeouts{Command: time.Hour}}))
	assert.NoError(t, err, "a default above the default maximum raises the maximum")
}

func TestBashCancel(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *harness.ToolResult, 1)
	tag := shelltest.SleepTag(t)
	go func() {
		done <- shelltest.Run(t, ctx, Bash(Config{}), env, map[string]any{"command": "sleep " + tag + " & touch ready; wait"})
	}()
	shelltest.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(env.Cwd, "ready")); return err == nil }, "the command to start")
	cancel()
	res := <-done
	require.True(t, res.IsError)
	assert.Equal(t, harness.CodeAborted, res.Code)
	assert.Contains(t, res.Text(), "[cancelled after ")
	assert.Contains(t, res.Text(), "its processes were sent SIGTERM and ended")
	assert.Equal(t, "cancelled", res.Render.Terminal.Status)
	shelltest.RequireNoTagged(t, tag)
}

func TestBashStopsLeftoverBackgroundProcesses(t *testing.T) {
	env := shelltest.Env(t)
	tag := shelltest.SleepTag(t)
	res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": "sleep " + tag + " &"})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "[exit code 0")
	assert.Contains(t, res.Text(), "[processes it left running in the background were sent SIGTERM and ended]")
	shelltest.RequireNoTagged(t, tag)
}

func TestBashKilledBySignal(t *testing.T) {
	env := shelltest.Env(t)
	res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": `echo before; kill -SEGV $$`})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "before\n[killed by SIGSEGV")
	assert.Equal(t, "killed", res.Render.Terminal.Status)
}

func TestBashLongOutputIsSpilled(t *testing.T) {
	env := shelltest.Env(t)
	store := env.Output.(*shelltest.DirStore)
	res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": "seq 1 100000; seq 1 3 >&2"})
	require.False(t, res.IsError, res.Text())
	text := res.Text()
	assert.Less(t, len(text), shellkit.DefaultOutputLimit+2000, "the result stays well under the spill middleware's threshold")
	assert.True(t, strings.HasPrefix(text, "1\n2\n3\n"), "the head is shown")
	assert.Contains(t, text, "\n100000\n[The whole stdout (575.1 KiB, 100000 lines)", "the tail is shown, with the total")
	assert.Contains(t, text, "100000 lines) is saved as spill://out1")
	assert.Contains(t, text, "[... ")
	assert.Contains(t, text, "[stderr]\n1\n2\n3\n[exit code 0", "stderr is short and shown whole")

	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	assert.Equal(t, want.String(), store.Read(t, "spill://out1"), "the whole stream is saved")
	require.Len(t, store.Owners(), 1, "only the stream that was cut is saved")
	assert.Equal(t, "s1", store.Owners()[0].Session)
	assert.Equal(t, "bash", store.Owners()[0].Tool)
}

func TestBashBothStreamsSpilled(t *testing.T) {
	env := shelltest.Env(t)
	store := env.Output.(*shelltest.DirStore)
	// Each stream alone would fit; together they do not, so both are cut
	// and both saved.
	res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": "head -c 15000 /dev/zero | tr '\\0' o; head -c 15000 /dev/zero | tr '\\0' e >&2"})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "The whole stdout (14.6 KiB")
	assert.Contains(t, res.Text(), "The whole stderr (14.6 KiB")
	assert.Equal(t, strings.Repeat("o", 15000), store.Read(t, "spill://out1"))
	assert.Equal(t, strings.Repeat("e", 15000), store.Read(t, "spill://out2"))
}

func TestBashLongOutputWithoutStore(t *testing.T) {
	env := shelltest.Env(t)
	env.Output = nil
	res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": "seq 1 100000"})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "[The whole stdout (575.1 KiB) was not saved. To see all of it, run the command again with its output redirected to a file")
	assert.Contains(t, res.Text(), "\n100000\n")
}

func TestBashSpillCap(t *testing.T) {
	env := shelltest.Env(t)
	store := env.Output.(*shelltest.DirStore)
	res := shelltest.Run(t, context.Background(), Bash(Config{Limits: Limits{Saved: 50000}}), env, map[string]any{"command": "seq 1 100000"})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "only its first 48.8 KiB were saved, as spill://out1")
	assert.Len(t, store.Read(t, "spill://out1"), 50000)
}

// TestBashGigabyteBoundedMemory runs a command that prints 1 GiB: the
// whole stream reaches the store, the model sees the tail, and the heap
// stays small.
func TestBashGigabyteBoundedMemory(t *testing.T) {
	// 128 MiB by default, twice what the heap may hold; 1 GiB in the
	// long runs.
	size := longtest.Pick[int64](128<<20, 1<<30)
	env := shelltest.Env(t)
	store := &shelltest.CountStore{}
	env.Output = store
	peak := shelltest.HeapPeak(t)
	res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": fmt.Sprintf("yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c %d; echo; echo end >&2", size)})
	max := peak()
	require.False(t, res.IsError, res.Text())
	// 37-byte lines, the last one cut and ended by echo.
	assert.Contains(t, res.Text(), fmt.Sprintf("The whole stdout (%s, %d lines) is saved as spill://count1", units.Bytes(size+1), size/37+1))
	assert.Contains(t, res.Text(), "abcdefghijklmnopqrstuvwxyz0123456789\n")
	assert.Contains(t, res.Text(), "[stderr]\nend\n")
	rec, ok := store.Get("spill://count1")
	require.True(t, ok)
	assert.Equal(t, size+1, rec.Size)
	t.Logf("%s streamed, peak heap in use: %.1f MiB", units.Bytes(size), float64(max)/(1<<20))
	assert.Less(t, max, uint64(64<<20), "memory stays bounded")
}

func TestBashSandbox(t *testing.T) {
	env := shelltest.Env(t)
	sb := &shelltest.EnvSandbox{}
	res := shelltest.Run(t, context.Background(), Bash(Config{Sandbox: sb}), env, map[string]any{"command": "echo $SANDBOXED"})
	require.False(t, res.IsError, res.Text())
	assert.True(t, strings.HasPrefix(res.Text(), "yes\n"), res.Text())
	assert.Equal(t, env.Cwd, sb.Dir)

	res = shelltest.Run(t, context.Background(), Bash(Config{Sandbox: &shelltest.EnvSandbox{Deny: true}}), env, map[string]any{"command": "echo hi"})
	require.True(t, res.IsError)
	assert.Equal(t, CodeSandboxDenied, res.Code)
	assert.Contains(t, res.Text(), "not allowed here")
}

func TestBashMissingShell(t *testing.T) {
	env := shelltest.Env(t)
	res := shelltest.Run(t, context.Background(), Bash(Config{Shell: "no-such-bash-here"}), env, map[string]any{"command": "true"})
	require.True(t, res.IsError)
	assert.Equal(t, CodeNoShell, res.Code)
	assert.Contains(t, res.Text(), "could not be found")
}

func TestBashCancelledBeforeStart(t *testing.T) {
	env := shelltest.Env(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := shelltest.Run(t, ctx, Bash(Config{}), env, map[string]any{"command": "touch ran"})
	require.True(t, res.IsError)
	assert.Equal(t, harness.CodeAborted, res.Code)
	assert.Equal(t, "The call was cancelled before the command started; nothing was run.", res.Text())
	_, err := os.Stat(filepath.Join(env.Cwd, "ran"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
