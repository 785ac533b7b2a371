package shell

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// An escape is a shell snippet that leaves a process running outside the
// process group of the command that started it. The process is TS (a
// script that creates the file $R and becomes `sleep $T`), so that it
// carries the tag $T in its argv and can be found in /proc afterwards.
// The snippet returns at once.
type escape struct {
	name string
	need string // an interpreter the snippet needs, "" for none
	code string // PERL, PYTHON and TS are replaced by paths
}

var escapes = []escape{
	{"background", "", `TS "$T" &`},
	{"timeout", "timeout", `timeout 1000 TS "$T" &`},
	{"setsid", "setsid", `setsid TS "$T" &`},
	{"set -m", "", `set -m; TS "$T" & set +m`},
	{"perl setpgrp", "perl", `PERL -e 'exit if fork; setpgrp(0, 0); exec "TS", $ARGV[0]' "$T"`},
	{"python start_new_session", "python3", `PYTHON -c 'import subprocess, sys; subprocess.Popen(["TS", sys.argv[1]], start_new_session=True)' "$T"`},
	{"python setsid", "python3", `PYTHON -c 'import os, sys
if os.fork(): os._exit(0)
os.setsid(); os.execv("TS", ["TS", sys.argv[1]])' "$T"`},
}

// taggedSleep is the script the escapes leave running.
const taggedSleep = "#!/bin/sh\n: > \"$R\"\nexec sleep \"$1\"\n"

// interpreters resolves the interpreters the escapes need, once per test
// binary run; a missing one maps to "".
func interpreters(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"perl", "python3", "timeout", "setsid"} {
		p, err := exec.LookPath(name)
		if err != nil {
			out[name] = ""
			continue
		}
		if name == "python3" {
			// A version manager's shim takes long to start; ask the
			// interpreter where it really is.
			if b, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(bytes.TrimSpace(b)) > 0 {
				p = string(bytes.TrimSpace(b))
			}
		}
		out[name] = p
	}
	return out
}

// A stopPath starts a command that runs the escapes, stops it one way,
// and returns the tool text that reports the stop. setup(name) is the
// script that runs every escape, each with its own tag ($T) and ready
// file ($R, fresh per name), and waits until all of them are up. A path
// whose timing depends on the escapes starting in time uses scale (1, 2,
// 4, ...) for its waits and returns retry when they were not up in time.
type stopPath struct {
	name string
	run  func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (text string, retry bool)
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	eventually(t, func() bool { _, err := os.Stat(path); return err == nil }, "the escape to start")
}

var stopPaths = []stopPath{
	{"bash timeout", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		res := run(t, context.Background(), Bash(opts...), env, map[string]any{
			"command": setup("a") + "; echo ready; sleep 1000", "timeout_ms": (1500 * time.Millisecond * scale).Milliseconds()})
		require.Equal(t, harness.CodeTimeout, res.Code, res.Text())
		return res.Text(), !strings.Contains(res.Text(), "ready\n")
	}},
	{"bash cancel", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan *harness.ToolResult, 1)
		go func() {
			done <- run(t, ctx, Bash(opts...), env, map[string]any{"command": setup("a") + "; touch ready; sleep 1000"})
		}()
		waitFile(t, filepath.Join(env.Cwd, "ready"))
		cancel()
		res := <-done
		require.Equal(t, harness.CodeAborted, res.Code, res.Text())
		return res.Text(), false
	}},
	{"bash exit", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		res := run(t, context.Background(), Bash(opts...), env, map[string]any{"command": setup("a")})
		require.False(t, res.IsError, res.Text())
		return res.Text(), false
	}},
	{"bash_kill", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		k := newJobKit(t, env, opts...)
		id := startJob(t, k, setup("a")+"; touch ready; sleep 1000")
		waitFile(t, filepath.Join(env.Cwd, "ready"))
		res := run(t, context.Background(), k.kil, env, map[string]any{"job_id": id})
		require.False(t, res.IsError, res.Text())
		return res.Text(), false
	}},
	{"job exit", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		k := newJobKit(t, env, opts...)
		id := startJob(t, k, setup("a"))
		res := k.out(id, 60000)
		require.NotContains(t, res.Text(), "is still running", res.Text())
		return res.Text(), false
	}},
	{"shell_close", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		k := newKit(t, env, opts...)
		id := openShellID(t, k)
		res := k.do(id, setup("a"), 60000)
		require.Contains(t, res.Text(), "[exit code 0", res.Text())
		res = run(t, context.Background(), k.close, env, map[string]any{"session_id": id})
		require.False(t, res.IsError, res.Text())
		return res.Text(), false
	}},
	{"shell exit", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		k := newKit(t, env, opts...)
		id := openShellID(t, k)
		res := k.do(id, setup("a")+"; exit 3", 60000)
		require.Contains(t, res.Text(), "exited with code 3", res.Text())
		return res.Text(), false
	}},
	{"idle reaper", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		k := newKit(t, env, append(opts, WithTimeouts(Timeouts{Idle: 1500 * time.Millisecond * scale}))...)
		id := openShellID(t, k)
		res := k.do(id, setup("a"), 60000)
		if !strings.Contains(res.Text(), "[exit code 0") {
			// Reaped before the escape was up: try again with more time.
			return res.Text(), true
		}
		// Poll the table, not the shell: a call would count as a use.
		m, err := tools.LoadState(env.State, k.st.key, func() *shells { return nil })
		require.NoError(t, err)
		var text string
		eventually(t, func() bool {
			_, err := m.get(id)
			if err != nil {
				text = err.Error()
			}
			return err != nil
		}, "the idle shell to be closed")
		return text, false
	}},
	{"state close", func(t *testing.T, env *tools.Env, opts []Option, setup func(string) string, scale time.Duration) (string, bool) {
		// One shell and one job run the escape; closing the state stops
		// both.
		k := newKit(t, env, opts...)
		id := openShellID(t, k)
		res := k.do(id, setup("a"), 60000)
		require.Contains(t, res.Text(), "[exit code 0", res.Text())
		jk := newJobKit(t, env, opts...)
		startJob(t, jk, setup("b")+"; touch ready; sleep 1000")
		waitFile(t, filepath.Join(env.Cwd, "ready"))
		if err := env.State.Close(); err != nil {
			return err.Error(), false
		}
		return "", false
	}},
}

var jobIDRE = regexp.MustCompile(`Started background job (job\d+)`)

type testContainment struct {
	name string
	want string // the containment the results must name
	opts []Option
	// paths limits the stop paths tried, nil for all.
	paths []string
}

// testContainments returns the containments to test: the one the system
// allows (a PID namespace, as root or through a user namespace), and the
// process tree, forced. The process tree is tried on the stop paths
// that reach its code in different ways (a stop, the stop of leftovers
// after an exit, a persistent shell, a closing session); every path
// with HARNESS_LONG_TESTS=1.
func testContainments(t *testing.T) []testContainment {
	def := newConfig(nil).containment()
	if !def.Namespace() {
		t.Logf("no PID namespace here (%s): the default containment is the process tree", def)
	}
	tree := testContainment{name: "tree", want: "process tree (no pid namespace: forced for a test)",
		opts: []Option{withoutNamespace("forced for a test")}, paths: []string{"bash cancel", "bash exit", "shell_close", "state close"}}
	if os.Getenv("HARNESS_LONG_TESTS") == "1" {
		tree.paths = nil
	}
	return []testContainment{{name: "default", want: def.String()}, tree}
}

// checkStopText checks that the text reporting a stop is honest: it
// names the containment where the path has a result to name it in, and
// claims no survivors.
func checkStopText(t *testing.T, cont testContainment, path, text string) {
	t.Helper()
	require.NotContains(t, text, "still run", "the text says processes survived")
	switch path {
	case "state close":
		require.Empty(t, text, "closing the state returns no error")
	case "idle reaper":
		require.Contains(t, text, "without use")
	case "shell exit":
		require.Contains(t, text, "background processes are gone")
	default:
		require.Contains(t, text, "[containment: "+cont.want)
		if path == "bash exit" || path == "job exit" {
			// SIGTERM ends them, unless a loaded machine runs them too late
			// for the grace period; either way, nothing is left.
			require.Contains(t, text, "[processes it left running in the background were sent SIGTERM")
		}
	}
}

// leftWithTags waits a little for the processes with any of the tags
// to go, and returns those still running, by tag. One scan of /proc
// serves all the tags.
func leftWithTags(tags []string) map[string][]int {
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := map[string][]int{}
		names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				continue
			}
			for _, tag := range tags {
				if bytes.Contains(b, []byte(tag)) {
					var pid int
					fmt.Sscanf(n, "/proc/%d/cmdline", &pid)
					if pidAlive(pid) {
						left[tag] = append(left[tag], pid)
					}
				}
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startJob(t *testing.T, k *jobKit, command string) string {
	t.Helper()
	res := run(t, context.Background(), k.bash, k.env, map[string]any{"command": command, "run_in_background": true})
	require.False(t, res.IsError, res.Text())
	m := jobIDRE.FindStringSubmatch(res.Text())
	require.NotNil(t, m, res.Text())
	return m[1]
}

func openShellID(t *testing.T, k *sessionKit) string {
	t.Helper()
	res := run(t, context.Background(), k.open, k.env, map[string]any{})
	require.False(t, res.IsError, res.Text())
	m := shellIDRE.FindStringSubmatch(res.Text())
	require.NotNil(t, m, res.Text())
	return m[1]
}

// TestEscapesDoNotOutliveStops runs every escape against every stop
// path, under each containment: one command per stop path runs all the
// escapes, the paths all at once. It checks that no process of any
// escape is left afterwards and that the text reporting the stop says
// so.
func TestEscapesDoNotOutliveStops(t *testing.T) {
	interp := interpreters(t)
	var escs []escape
	for _, esc := range escapes {
		if esc.need != "" && interp[esc.need] == "" {
			t.Logf("escape %q skipped: %s is not installed", esc.name, esc.need)
			continue
		}
		escs = append(escs, esc)
	}
	var wg sync.WaitGroup
	for _, cont := range testContainments(t) {
		for _, sp := range stopPaths {
			if cont.paths != nil && !slices.Contains(cont.paths, sp.name) {
				continue
			}
			wg.Go(func() {
				t.Run(cont.name+"/"+sp.name, func(t *testing.T) { runPath(t, cont, sp, escs, interp) })
			})
		}
	}
	wg.Wait()
}

// runPath runs the escapes against one stop path, with more time when
// they were not up in time, and checks each escape in a subtest.
func runPath(t *testing.T, cont testContainment, sp stopPath, escs []escape, interp map[string]string) {
	for scale := time.Duration(1); ; scale *= 2 {
		env := testEnv(t)
		ts := filepath.Join(env.Cwd, "ts")
		require.NoError(t, os.WriteFile(ts, []byte(taggedSleep), 0o755))
		tags := make([]string, len(escs))
		lines := make([]string, len(escs))
		for i, esc := range escs {
			tag, setT := newTag(t)
			t.Cleanup(func() { killTagged(tag) })
			tags[i] = tag
			lines[i] = setT + "; export R=\"$PWD/ready.%[1]s." + fmt.Sprint(i) + "\"\n" +
				strings.NewReplacer("PERL", interp["perl"], "PYTHON", interp["python3"], "TS", ts, "%", "%%").Replace(esc.code)
		}
		setup := func(name string) string {
			var b strings.Builder
			var ready []string
			for i, line := range lines {
				fmt.Fprintf(&b, line+"\n", name)
				ready = append(ready, fmt.Sprintf(`[ -e "$PWD/ready.%s.%d" ]`, name, i))
			}
			fmt.Fprintf(&b, "until %s; do sleep 0.01; done", strings.Join(ready, " && "))
			return b.String()
		}
		opts := append([]Option{WithTimeouts(Timeouts{KillGrace: 300 * time.Millisecond})}, cont.opts...)
		text, retry := sp.run(t, env, opts, setup, scale)
		left := leftWithTags(tags)
		for i, esc := range escs {
			t.Run(esc.name, func(t *testing.T) {
				if len(left[tags[i]]) > 0 {
					requireNoTagged(t, tags[i]) // fails, naming them
				}
			})
		}
		if retry && scale < 16 {
			t.Logf("the escapes were not up in time; again with %dx the time", 2*scale)
			continue
		}
		require.False(t, retry, "the escapes were never up in time: %s", text)
		checkStopText(t, cont, sp.name, text)
		return
	}
}
