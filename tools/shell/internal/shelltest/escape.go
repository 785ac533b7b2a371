package shelltest

import (
	"bytes"
	"errors"
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

	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// An Escape is a shell snippet that leaves a process running outside the
// process group of the command that started it. The process is TS (a
// script that creates the file $R and becomes `sleep $T`), so that it
// carries the tag $T in its argv and can be found in /proc afterwards.
// The snippet returns at once.
type Escape struct {
	Name string
	Need string // an interpreter the snippet needs, "" for none
	Code string // PERL, PYTHON and TS are replaced by paths
}

// Escapes are the ways a process leaves its command's process group.
var Escapes = []Escape{
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

// Interpreters resolves the interpreters the escapes need; a missing one
// maps to "".
func Interpreters(t *testing.T) map[string]string {
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

// usable returns the escapes whose interpreter is installed, logging the
// others.
func usable(t *testing.T, interp map[string]string) []Escape {
	var escs []Escape
	for _, esc := range Escapes {
		if esc.Need != "" && interp[esc.Need] == "" {
			t.Logf("escape %q skipped: %s is not installed", esc.Name, esc.Need)
			continue
		}
		escs = append(escs, esc)
	}
	return escs
}

// A StopPath starts a command that runs the escapes, stops it one way,
// and returns the tool text that reports the stop. setup(name) is the
// script that runs every escape, each with its own tag ($T) and ready
// file ($R, fresh per name), and waits until all of them are up. config
// returns a fresh configuration with the containment under test and a
// short kill grace. A path whose timing depends on the escapes starting
// in time uses scale (1, 2, 4, ...) for its waits and returns retry when
// they were not up in time.
type StopPath struct {
	Name string
	Run  func(t *testing.T, env *tools.Env, config func() *shellkit.Config, setup func(string) string, scale time.Duration) (text string, retry bool)
}

// A Containment is one way the tools contain commands, as the escape
// suite tries it.
type Containment struct {
	Name string
	Want string // the containment the results must name
	// NoNamespace forces the process tree, when set.
	NoNamespace error
	// NoCgroup keeps commands out of cgroups, so that they run in PID
	// namespaces.
	NoCgroup bool
	// Paths limits the stop paths tried, nil for all.
	Paths []string
}

// Containments returns the containments to test: the one the system
// allows (a cgroup of each command's own as root, else a PID namespace,
// as root or through a user namespace), a PID namespace when the default
// is a cgroup, and the process tree, forced. The ones that are not the
// default are tried on the stop paths that reach their code in
// different ways (a stop, the stop of leftovers after an exit, a
// persistent shell, a closing session); every path with
// HARNESS_LONG_TESTS=1.
func Containments(t *testing.T) []Containment {
	def := shellkit.Defaults().Containment()
	if !def.Namespace() {
		t.Logf("no PID namespace here (%s): the default containment is the process tree", def)
	}
	some := []string{"bash cancel", "bash exit", "shell_close", "state close"}
	if os.Getenv("HARNESS_LONG_TESTS") == "1" {
		some = nil
	}
	out := []Containment{{Name: "default", Want: def.String()}}
	if def.Cgroup() {
		c := shellkit.Defaults()
		c.NoCgroup = true
		if ns := c.Containment(); ns.Namespace() {
			out = append(out, Containment{Name: "pidns", Want: ns.String(), NoCgroup: true, Paths: some})
		}
	}
	tree := Containment{Name: "tree", Want: "process tree (no pid namespace: forced for a test)",
		NoNamespace: errors.New("forced for a test"), Paths: some}
	return append(out, tree)
}

// RunEscapes runs every escape against every stop path, under each
// containment: one command per stop path runs all the escapes, the
// paths all at once. It checks that no process of any escape is left
// afterwards and that the text reporting the stop says so.
func RunEscapes(t *testing.T, conts []Containment, paths []StopPath) {
	interp := Interpreters(t)
	escs := usable(t, interp)
	var wg sync.WaitGroup
	for _, cont := range conts {
		for _, sp := range paths {
			if cont.Paths != nil && !slices.Contains(cont.Paths, sp.Name) {
				continue
			}
			wg.Go(func() {
				t.Run(cont.Name+"/"+sp.Name, func(t *testing.T) { runPath(t, cont, sp, escs, interp) })
			})
		}
	}
	wg.Wait()
}

// runPath runs the escapes against one stop path, with more time when
// they were not up in time, and checks each escape in a subtest.
func runPath(t *testing.T, cont Containment, sp StopPath, escs []Escape, interp map[string]string) {
	for scale := time.Duration(1); ; scale *= 2 {
		env := Env(t)
		ts := filepath.Join(env.Cwd, "ts")
		require.NoError(t, os.WriteFile(ts, []byte(taggedSleep), 0o755))
		tags := make([]string, len(escs))
		lines := make([]string, len(escs))
		for i, esc := range escs {
			tag, setT := NewTag(t)
			t.Cleanup(func() { KillTagged(tag) })
			tags[i] = tag
			lines[i] = setT + "; export R=\"$PWD/ready.%[1]s." + fmt.Sprint(i) + "\"\n" +
				strings.NewReplacer("PERL", interp["perl"], "PYTHON", interp["python3"], "TS", ts, "%", "%%").Replace(esc.Code)
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
		config := func() *shellkit.Config {
			c := shellkit.Defaults()
			c.Grace = 300 * time.Millisecond
			c.NoNamespace = cont.NoNamespace
			c.NoCgroup = cont.NoCgroup
			return c
		}
		text, retry := sp.Run(t, env, config, setup, scale)
		left := leftWithTags(tags)
		for i, esc := range escs {
			t.Run(esc.Name, func(t *testing.T) {
				if len(left[tags[i]]) > 0 {
					RequireNoTagged(t, tags[i]) // fails, naming them
				}
			})
		}
		if retry && scale < 16 {
			t.Logf("the escapes were not up in time; again with %dx the time", 2*scale)
			continue
		}
		require.False(t, retry, "the escapes were never up in time: %s", text)
		checkStopText(t, cont, sp.Name, text)
		return
	}
}

// checkStopText checks that the text reporting a stop is honest: it
// names the containment where the path has a result to name it in, and
// claims no survivors.
func checkStopText(t *testing.T, cont Containment, path, text string) {
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
		require.Contains(t, text, "[containment: "+cont.Want)
		if path == "bash exit" || path == "job exit" {
			// SIGTERM ends them, unless a loaded machine runs them too late
			// for the grace period; either way, nothing is left.
			require.Contains(t, text, "[processes it left running in the background were sent SIGTERM")
		}
	}
}

// leftWithTags waits for the processes with any of the tags to go (a
// loaded machine may take seconds to run their exit), and returns those
// still running, by tag. One scan of /proc serves all the tags.
func leftWithTags(tags []string) map[string][]int {
	deadline := time.Now().Add(30 * time.Second)
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
					if PidAlive(pid) {
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

// WaitFile waits until path exists.
func WaitFile(t *testing.T, path string) {
	t.Helper()
	Eventually(t, func() bool { _, err := os.Stat(path); return err == nil }, "the escape to start")
}

// ShellIDRE finds the id in shell_open's result.
var ShellIDRE = regexp.MustCompile(`Opened shell (sh\d+)`)

// JobIDRE finds the id in the result of a background job's start.
var JobIDRE = regexp.MustCompile(`Started background job (job\d+)`)
