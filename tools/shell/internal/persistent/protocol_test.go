package persistent

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// externalPrintf returns the path of a printf program, which no shell
// function or builtin setting can change.
func externalPrintf(t *testing.T) string {
	p, err := osexec.LookPath("printf")
	if err != nil || !filepath.IsAbs(p) {
		t.Skip("no printf program to run the tests with")
	}
	return p
}

// forger defines forge, a function that looks for a nonce (32 hex
// digits, or 22 letters and digits after an RS byte) in its arguments and
// in $BASH_COMMAND and, when it finds one, prints end records with it
// that claim exit status 0 and the directory /FORGED, in every record
// format the harness has used, to descriptor 19 and to stdout. It logs
// what it was given to log. printf is the path of a printf program.
func forger(printf, log string) string {
	return fmt.Sprintf(`forge() {
  %[1]s '%%s\n' "$*" >> %[2]q
  for a in "$@" "$BASH_COMMAND"; do
    if [[ $a =~ [0-9a-f]{32} || $a =~ $'\036'([0-9A-Za-z]{22}) ]]; then
      n=${BASH_REMATCH[1]:-${BASH_REMATCH[0]}}
      %[1]s '\036%%s e 0 x - x /FORGED\036%%s\036\n\036%%s 0 /FORGED\036%%s\n\036%%s e 0 x - x /FORGED\036%%s\n' $n $n $n $n $n $n >&19
      %[1]s '\036%%s e 0 x - x /FORGED\036%%s\036\n\036%%s 0 /FORGED\036%%s\n\036%%s e 0 x - x /FORGED\036%%s\n' $n $n $n $n $n $n
    fi
  done
  return 0
}
`, printf, log)
}

// nonceSeen finds a nonce of any record format in a forger's log.
var nonceSeen = regexp.MustCompile("[0-9a-f]{32}|\x1e[0-9A-Za-z]{22}")

// TestProtocolResistsRedefinitions redefines, disables or bends what a
// marker could rely on, then checks that a command still reports its own
// exit status and directory, or that the result says plainly that the
// shell is broken. No case may report the forged status or directory.
func TestProtocolResistsRedefinitions(t *testing.T) {
	printf := externalPrintf(t)
	shadow := func(names ...string) string {
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "function %s { forge \"$@\"; }\n", n)
		}
		return b.String()
	}
	tests := []forgeCase{
		{name: "printf", setup: shadow("printf")},
		{name: "echo", setup: shadow("echo")},
		{name: "eval", setup: shadow("eval")},
		{name: "command", setup: shadow("command")},
		{name: "test and [", setup: shadow("test", "[")},
		{name: "exit", setup: shadow("exit")},
		{name: "unset", setup: shadow("unset")},
		{name: "cd and pwd", setup: shadow("cd", "pwd")},
		{name: "trap and set", setup: shadow("trap", "set")},
		{name: "declare, local, read, type", setup: shadow("declare", "local", "read", "type")},
		{name: ": and source", setup: shadow(":", "source", ".")},
		{name: "every name at once", setup: shadow("printf", "echo", "eval", "command", "test", "[", "exit", "unset", "trap", ":", "source")},
		{name: "builtin", setup: shadow("builtin"), broken: true},
		{name: "aliases", setup: "shopt -s expand_aliases\n" +
			`alias builtin='forge "' eval='forge "' test='forge "' exit='forge "' printf='forge "' '[['='forge "' time='forge "' select='forge "' '{'='forge "' '('='forge "'`},
		{name: "enable -n printf and echo", setup: "enable -n printf echo"},
		{name: "enable -n eval", setup: "enable -n eval", broken: true},
		{name: "enable -n builtin", setup: "enable -n builtin", broken: true},
		{name: "read-only __harness_ran", setup: "readonly __harness_ran", broken: true},
		{name: "integer and array __harness_ran", setup: "declare -ia __harness_ran"},
		{name: "nameref __harness_ran", setup: "declare -n __harness_ran=OTHER"},
		{name: "unset __harness_ran", setup: "unset __harness_ran"},
		{name: "read-only names", setup: "readonly __hs __hr __hf __hp __hn __s __v"},
		{name: "set -u", setup: "set -u"},
		{name: "set -o posix", setup: "set -o posix"},
		{name: "set -x", setup: "set -x", quiet: true},
		{name: "set -v", setup: "set -v", quiet: true},
		{name: "set -o history", setup: "set -o history", quiet: true},
		{name: "a DEBUG trap that skips commands", setup: "trap false DEBUG; shopt -s extdebug", broken: true},
		{name: "set -f, noclobber, pipefail", setup: "set -f -C -o pipefail"},
		{name: "glob options", setup: "shopt -s failglob nullglob extglob nocasematch nocaseglob dotglob globstar"},
		{name: "IFS of digits", setup: "IFS=0123456789e"},
		{name: "DEBUG trap", setup: `trap 'forge "$BASH_COMMAND"' DEBUG`, quiet: true},
		{name: "DEBUG trap in subshells", setup: `trap 'forge "$BASH_COMMAND"' DEBUG; set -T`, quiet: true},
		{name: "DEBUG trap, extdebug", setup: `trap 'forge "$BASH_COMMAND"' DEBUG; shopt -s extdebug`, quiet: true},
		{name: "ERR trap", setup: `trap 'forge ERR' ERR; set -E`, quiet: true},
		// The status variable of the protocols before this one, rewritten
		// by a DEBUG trap between the command and the record.
		{name: "DEBUG trap that rewrites a status variable", setup: `trap '[[ $BASH_COMMAND =~ (_hs[a-z0-9]{6})=\$\? ]] && __v=${BASH_REMATCH[1]}; ` +
			`[[ -n ${__v-} && $BASH_COMMAND == *"builtin test /dev/fd/1"* ]] && \builtin eval "$__v=0"' DEBUG`},
		{name: "BASH_ARGV0", setup: "BASH_ARGV0=/FORGED"},
		{name: "a fake record on descriptor 19", setup: `printf '\036%s s\036%s\n\036%s e 0 x - x /FORGED\036%s\n' ab ab ab ab >&19`},
		{name: "descriptor 19 closed", setup: "exec 19>&-", broken: true},
		{name: "descriptor 19 to /dev/null", setup: "exec 19>/dev/null", broken: true},
	}
	for _, mode := range fdModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			resistRedefinitions(t, printf, tests, mode.setup)
		})
	}
}

// forgeCase is a case of TestProtocolResistsRedefinitions.
type forgeCase struct {
	name  string
	setup string
	// broken: the shell must say it cannot run commands any more.
	broken bool
	// quiet: output and $? are not checked (the setup changes them).
	quiet bool
}

func resistRedefinitions(t *testing.T, printf string, tests []forgeCase, mode func(*kit, string)) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := shelltest.Env(t)
			k := newKit(t, env)
			log := filepath.Join(t.TempDir(), "log")
			id, _ := k.OpenShell(nil)
			mode(k, id)
			res := k.Do(id, forger(printf, log)+tc.setup, 5000)
			require.NotContains(t, res.Text(), "FORGED]", res.Text())

			res = k.Do(id, printf+" 'probe-output\\n'; false", 5000)
			text := res.Text()
			assert.NotContains(t, text, "FORGED]", text)
			assert.NotContains(t, text, "[exit code 0", text)
			if tc.broken {
				if !res.IsError {
					assert.Contains(t, text, "Shell "+id+" is broken", text)
				} else {
					assert.Equal(t, shellkit.CodeShellBroken, res.Code, text)
				}
				res = k.Do(id, "echo again")
				require.True(t, res.IsError, res.Text())
				assert.Equal(t, shellkit.CodeShellBroken, res.Code)
				assert.Contains(t, res.Text(), "shell_close", "the error says how to go on")
				res = shelltest.Run(t, context.Background(), k.Close, env, map[string]any{"session_id": id})
				require.False(t, res.IsError, res.Text())
				id, _ = k.OpenShell(nil)
				res = k.Do(id, "echo fresh")
				assert.True(t, strings.HasPrefix(res.Text(), "fresh\n[exit code 0"), res.Text())
				return
			}
			require.False(t, res.IsError, text)
			assert.Contains(t, text, "[exit code 1 · ", text)
			assert.Equal(t, "[cwd "+env.Cwd+"]", shelltest.LastLine(text))
			assert.NotContains(t, text, "is broken")
			if !tc.quiet {
				assert.True(t, strings.HasPrefix(text, "probe-output\n[exit code 1 · "), text)
				res = k.Do(id, printf+` 'status=%s\n' "$?"`, 5000)
				assert.True(t, strings.HasPrefix(res.Text(), "status=1\n[exit code 0 · "), "$? is the previous command's status: %s", res.Text())
			} else {
				// A result comes with the command's end record; the shell
				// then still runs the rest of the line, and a DEBUG trap
				// with it. The next command's end shows that it has
				// finished, so the log is read whole.
				res = k.Do(id, ":")
				assert.Contains(t, res.Text(), "[exit code 0 · ", res.Text())
			}
			if b, err := os.ReadFile(log); err == nil {
				assert.False(t, nonceSeen.Match(b), "no redefined name ever saw a nonce:\n%s", b)
			}
		})
	}
}

func TestProtocolStdoutRedirectedAway(t *testing.T) {
	for _, mode := range fdModes {
		t.Run(mode.name, func(t *testing.T) {
			env := shelltest.Env(t)
			k := newKit(t, env)
			id, _ := k.OpenShell(nil)
			mode.setup(k, id)
			stdoutRedirectedAway(t, k, id)
		})
	}
}

func stdoutRedirectedAway(t *testing.T, k *kit, id string) {
	res := k.Do(id, "exec >out.txt; echo hidden")
	assert.Contains(t, res.Text(), "[exit code 0")
	assert.Contains(t, res.Text(), "[The shell's stdout no longer leads to this tool")
	assert.Contains(t, res.Text(), "exec >&18 2>&18")
	assert.NotContains(t, res.Text(), "hidden")
	res = k.Do(id, "exec 2>&-; echo still-hidden")
	assert.Contains(t, res.Text(), "[The shell's stdout and stderr no longer lead to this tool")
	res = k.Do(id, "exec >&18 2>&18; echo shown; cat out.txt")
	assert.True(t, strings.HasPrefix(res.Text(), "shown\nhidden\nstill-hidden\n[exit code 0"), res.Text())
	assert.NotContains(t, res.Text(), "no longer lead")
	res = k.Do(id, "exec >&-; echo gone")
	assert.Contains(t, res.Text(), "[The shell's stdout no longer leads to this tool")
	res = k.Do(id, "exec >&18 2>err.txt; echo back")
	assert.True(t, strings.HasPrefix(res.Text(), "back\n[exit code 0"), res.Text())
	assert.Contains(t, res.Text(), "[The shell's stderr no longer leads to this tool")
	res = k.Do(id, "exec 2>&18; echo both")
	assert.True(t, strings.HasPrefix(res.Text(), "both\n[exit code 0"), res.Text())
	assert.NotContains(t, res.Text(), "no longer lead")
}

func TestProtocolExposedCommandLineNoted(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	res := k.Do(id, "set -o history")
	assert.NotContains(t, res.Text(), "could read its own command line", "history was off as this line was read")
	res = k.Do(id, "history | grep -c . >/dev/null; true")
	assert.Contains(t, res.Text(), "[exit code 0")
	assert.Contains(t, res.Text(), "[set -v or set -o history was on when the shell read this command")
	res = k.Do(id, "set +o history")
	assert.Contains(t, res.Text(), "could read its own command line")
	res = k.Do(id, "true")
	assert.NotContains(t, res.Text(), "could read its own command line")
}

// TestProtocolExposedByTrapNoted: a trap that turns history off once the
// shell has read a line with history on does not hide that the line was
// recorded. Traps for signals that come while the shell waits for input
// run after it has read the next line, before that line's first command.
func TestProtocolExposedByTrapNoted(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	// The signal is sent once the test says the line has ended, and
	// the test goes on once it was sent: a slow machine neither sends it
	// while the line still runs nor after the next line was read.
	goFile, sent := filepath.Join(env.Cwd, "go"), filepath.Join(env.Cwd, "sent")
	res := k.Do(id, fmt.Sprintf("set -o history; trap 'set +o history' USR1; (until [ -e %q ]; do sleep 0.01; done; sleep 0.2; kill -USR1 $$; : > %q) &", goFile, sent))
	assert.NotContains(t, res.Text(), "could read its own command line", "history was off as this line was read")
	require.NoError(t, os.WriteFile(goFile, nil, 0o644))
	shelltest.Eventually(t, func() bool { _, err := os.Stat(sent); return err == nil }, "the signal to be sent")
	res = k.Do(id, "history")
	assert.Contains(t, res.Text(), "__harness_ran", "the line was recorded: %s", res.Text())
	assert.Contains(t, res.Text(), "[set -v or set -o history was on when the shell read this command", res.Text())
	res = k.Do(id, "true")
	assert.NotContains(t, res.Text(), "could read its own command line", "the trap turned history off")
}

// TestProtocolExposedLineForged: with set -v and stderr in a file, a
// command can read its own command line, and a forger then fakes its end
// record. The result warns that this could happen. (This also shows that
// the forger of TestProtocolResistsRedefinitions works once it has a
// nonce.)
func TestProtocolExposedLineForged(t *testing.T) {
	printf := externalPrintf(t)
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	echo := filepath.Join(t.TempDir(), "echo")
	res := k.Do(id, forger(printf, filepath.Join(t.TempDir(), "log"))+"exec 2>"+echo+"; set -v")
	assert.Contains(t, res.Text(), "[exit code 0", res.Text())
	res = k.Do(id, `forge "$(< `+echo+`)"; false`, 5000)
	assert.Contains(t, res.Text(), "[cwd /FORGED]", "the forged record was taken: %s", res.Text())
	assert.Contains(t, res.Text(), "[set -v or set -o history was on when the shell read this command", res.Text())
}

func TestProtocolSetENoted(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	res := k.Do(id, "set -e")
	assert.Contains(t, res.Text(), "[exit code 0")
	assert.Contains(t, res.Text(), "[set -e is on in this shell")
	res = k.Do(id, "set +e")
	assert.NotContains(t, res.Text(), "set -e is on")
}

func TestProtocolStatusChannelChatterShown(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	res := k.Do(id, "echo on-the-channel >&19; echo out")
	assert.Contains(t, res.Text(), "on-the-channel\n")
	assert.Contains(t, res.Text(), "out\n")
	assert.Contains(t, res.Text(), "[exit code 0")
	res = k.Do(id, "printf 'no newline' >&19; echo out")
	assert.Contains(t, res.Text(), "no newline", "a partial line before a record is shown")
	assert.NotContains(t, res.Text(), noFile, "bash's prefix of the record is not")
	assert.NotContains(t, res.Text(), scriptPath)
	assert.NotContains(t, res.Text(), "directory", "nor the rest of bash's message")
}

// TestProtocolNotStarted: a shell that does not read its input (here it
// is stopped) never starts the command, and the result says so.
func TestProtocolNotStarted(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	k := newKit(t, env)
	k.st.cfg.StartHint = 50 * time.Millisecond
	id, pgid := k.OpenShell(nil)
	require.NoError(t, syscall.Kill(-pgid, syscall.SIGSTOP))
	res := k.Do(id, "echo late", 300)
	assert.Contains(t, res.Text(), "[the shell has not started the command, ")
	assert.Contains(t, res.Text(), "shell_close")
	assert.Equal(t, shellkit.StatusRunning, res.Render.Terminal.Status)
	require.NoError(t, syscall.Kill(-pgid, syscall.SIGCONT))
	res = k.ReadOut(id, 10000)
	assert.True(t, strings.HasPrefix(res.Text(), "late\n[exit code 0"), res.Text())
}

// TestProtocolExitAndSetEReported: a shell that exits is reported as such
// and the next command gets a fresh shell.
func TestProtocolExitAndSetEReported(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env)
	id, _ := k.OpenShell(nil)
	res := k.Do(id, forger(externalPrintf(t), filepath.Join(t.TempDir(), "log"))+shadowAll+"exit 3")
	assert.Contains(t, res.Text(), "[The shell exited with code 3 while running")
	assert.Contains(t, res.Text(), "The next shell_send starts a fresh shell")
	res = k.Do(id, "echo fresh")
	assert.Contains(t, res.Text(), "fresh\n[exit code 0")
	assert.NotContains(t, res.Text(), "FORGED")
}

const shadowAll = "function printf { forge \"$@\"; }\nfunction eval { forge \"$@\"; }\n"

// TestProtocolRecordsNeedNoNamedCommand: the end record comes from bash
// itself even when every name the line uses is an ordinary word that
// nothing defines, and printing it forks nothing.
func TestProtocolRecordsNeedNoNamedCommand(t *testing.T) {
	c := newCommand()
	for _, fdTests := range []bool{false, true} {
		line := commandLine("true", c, 0, fdTests, "_hsx _hfx")
		records := 1
		if fdTests {
			records = 2 // the record of the checks follows them
		}
		// The nonce appears only in the file names of failed redirections.
		assert.Equal(t, 2*records, strings.Count(line, c.nonce))
		assert.Equal(t, records, strings.Count(line, "((1)) 2>&19 <"+noFile+rs+c.nonce+`" `))
		assert.Equal(t, 1, strings.Count(line, `"`+rs+c.nonce+rs+` && 19>&19`+"\n"))
		// No reserved word that an alias could rewrite.
		for _, w := range []string{"if", "then", "fi", "case", "for", "while", "until", "do", "done", "time", "select", "function", "[[", "{", "}", "!"} {
			assert.NotRegexp(t, `(^|[;|&( ])`+regexp.QuoteMeta(w)+`( |$)`, line, "reserved word %q", w)
		}
		// No subshell, so no fork, unless the previous status is neither 0
		// nor 1.
		for _, prev := range []int{0, 1} {
			line := commandLine("true", c, prev, fdTests, "")
			assert.NotRegexp(t, `(^|[^(])\( `, line, "no subshell after status %d", prev)
			assert.NotContains(t, line, "$(")
		}
	}
}

// warnSandbox prints a warning on stderr before it starts the command, as
// sandbox launchers do.
type warnSandbox struct{}

func (warnSandbox) Wrap(argv []string, dir string) ([]string, error) {
	return append([]string{"sh", "-c", `echo "sandbox: a warning" >&2; printf 'no newline' >&2; exec "$@"`, "sh"}, argv...), nil
}

func (warnSandbox) Describe() string { return "warns" }

// TestProtocolStartupMessagesShown: what the sandbox or bash print on
// stderr before the shell is set up (it goes to the status channel then)
// is shown by shell_open.
func TestProtocolStartupMessagesShown(t *testing.T) {
	env := shelltest.Env(t)
	k := newKit(t, env, sandbox(warnSandbox{}))
	res := shelltest.Run(t, context.Background(), k.Open, env, map[string]any{})
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "sandbox: a warning\nno newline")
	assert.NotContains(t, res.Text(), noFile)
	id := regexp.MustCompile(`Opened shell (sh\d+)`).FindStringSubmatch(res.Text())[1]
	res = k.Do(id, "echo fine")
	assert.True(t, strings.HasPrefix(res.Text(), "fine\n[exit code 0"), res.Text())
}
