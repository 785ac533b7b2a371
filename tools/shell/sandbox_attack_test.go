//go:build linux

package shell

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// attackEnv marks the run of this test binary that
// TestSandboxAttacksUnprivileged starts as nobody.
const attackEnv = "HARNESS_SANDBOX_ATTACK_HELPER"

// attackSecret is what no attack may read.
const attackSecret = "TOPSECRET-c0ffee"

// arena is the host an attack runs against: a workspace with a denied
// directory, a protected .git, a denied file below two directories and an
// unanchored denied name, a listening unix socket in the workspace and one
// in a visible directory outside it, a canary process, and a secret in the
// host's environment.
type arena struct {
	ws      string // the workspace (OS path)
	outside string // a visible host directory outside the workspace, or ""
	// sockets is a host directory with a listening socket, or "": one
	// that sandboxes hide by default (below /var/tmp) and the arena's own
	// sandbox shows (Readable), so that the sandboxes of other test
	// processes never plan a mask over a socket this test removes.
	sockets string
	env     *tools.Env
	tool    tools.Tool
	sb      Sandbox
	accepts atomic.Int32 // connections the host's sockets accepted
	canary  *exec.Cmd
}

var attackRules = permission.Rules{
	Allow: []string{"Bash(ls:*)", "Bash(git status)", "Bash(npm test:*)"},
	Deny:  []string{"Bash(rm:*)", "Bash(curl:*)", "Read(./secrets/**)", "Edit(./.git/**)", "Read(./a/b/priv/**)", "Read(.env)"},
}

// newArena builds the host. sandbox makes the sandbox for a workspace
// and the policy's paths; nil means the sandbox under test.
func newArena(t *testing.T, sandbox func(ws string, paths *permission.Paths) Sandbox) *arena {
	t.Helper()
	a := &arena{}
	a.env = shelltest.Env(t)
	a.ws = a.env.Cwd
	for p, data := range map[string]string{
		"secrets/key.txt":      attackSecret + "\n",
		"secrets/sub/deep.txt": attackSecret + " deep\n",
		".git/config":          "[core]\n\tbare = false\n",
		".git/HEAD":            "ref: refs/heads/main\n",
		"a/b/priv/x.txt":       attackSecret + " priv\n",
		"a/b/open.txt":         "open\n",
		"sub/.env":             "TOKEN=" + attackSecret + "\n",
		"public.txt":           "public\n",
	} {
		full := filepath.Join(a.ws, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(data), 0o644))
	}
	// A visible directory outside the workspace and the hidden ones: the
	// package directory is on the read-only root. Only where it can be
	// made.
	if d, err := os.MkdirTemp(".", ".attack-"); err == nil {
		a.outside, _ = filepath.Abs(d)
		t.Cleanup(func() { os.RemoveAll(d) })
		require.NoError(t, os.WriteFile(filepath.Join(a.outside, "keep.txt"), []byte("original\n"), 0o644))
	}
	if d, err := os.MkdirTemp("/var/tmp", "harness-attack-"); err == nil {
		a.sockets = d
		t.Cleanup(func() { os.RemoveAll(d) })
		require.NoError(t, os.Chmod(d, 0o755))
	}
	for _, sock := range []string{filepath.Join(a.ws, "app.sock"), filepath.Join(a.sockets, "host.sock")} {
		if a.sockets == "" && !strings.HasPrefix(sock, a.ws) {
			continue
		}
		ln, err := net.Listen("unix", sock)
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				a.accepts.Add(1)
				fmt.Fprintln(c, "hello from the host")
				c.Close()
			}
		}()
	}
	a.canary = exec.Command("sleep", "600")
	require.NoError(t, a.canary.Start())
	t.Cleanup(func() { a.canary.Process.Kill(); a.canary.Wait() })
	t.Setenv("DEEPSEEK_API_KEY", "sk-"+attackSecret)
	t.Setenv("GITHUB_TOKEN", "ghp_"+attackSecret)

	pol, err := permission.New(attackRules)
	require.NoError(t, err)
	paths := pol.Paths(a.ws)
	if sandbox != nil {
		a.sb = sandbox(a.ws, paths)
	} else {
		var readable []string
		if a.sockets != "" {
			readable = []string{a.sockets}
		}
		sb, err := Bubblewrap(BubblewrapConfig{Workspace: a.ws, Paths: paths, TmpSize: 16 << 20,
			Limits: ResourceLimits{Processes: 400}, Readable: readable})
		require.NoError(t, err)
		a.sb = sb
	}
	a.tool = Bash(Config{Sandbox: a.sb, Timeouts: Timeouts{KillGrace: time.Second}})
	return a
}

// run runs a command in the sandbox and returns what it printed.
func (a *arena) run(t *testing.T, command string, timeout time.Duration) string {
	t.Helper()
	vars := fmt.Sprintf("WS=%q OUT=%q SOCKS=%q HOSTPID=%d CANARY=%d; ", a.ws, a.outside, a.sockets, os.Getpid(), a.canary.Process.Pid)
	args := map[string]any{"command": vars + command}
	if timeout > 0 {
		args["timeout_ms"] = timeout.Milliseconds()
	}
	return shelltest.Run(t, context.Background(), a.tool, a.env, args).Text()
}

// read returns a workspace file's content, "" when it is gone.
func (a *arena) read(t *testing.T, rel string) string {
	b, _ := os.ReadFile(filepath.Join(a.ws, rel))
	return string(b)
}

// attack is one way out of the sandbox. held checks, on the host and in
// what the command printed, that the sandbox held.
type attack struct {
	name    string
	command string
	timeout time.Duration
	need    string // a program the attack needs
	held    func(t *testing.T, a *arena, out string) bool
}

// not reports whether out contains none of the markers.
func not(out string, markers ...string) bool {
	for _, m := range markers {
		if strings.Contains(out, m) {
			return false
		}
	}
	return true
}

func missing(p string) bool {
	_, err := os.Lstat(p)
	return os.IsNotExist(err)
}

var attacks = []attack{
	{name: "write outside the workspace", command: `echo pwn > /etc/harness-attack; echo pwn > /usr/harness-attack; [ -n "$OUT" ] && echo pwn > "$OUT/keep.txt"; echo pwn > "$OUT/new.txt"`,
		held: func(t *testing.T, a *arena, out string) bool {
			ok := missing("/etc/harness-attack") && missing("/usr/harness-attack")
			if a.outside != "" {
				b, _ := os.ReadFile(filepath.Join(a.outside, "keep.txt"))
				ok = ok && string(b) == "original\n" && missing(filepath.Join(a.outside, "new.txt"))
			}
			return ok
		}},
	{name: "remount the root read-write", command: `mount -o remount,rw / && echo REMOUNTED; mount -o remount,rw "$WS/.git" && echo REMOUNTED; touch /usr/harness-attack`,
		held: func(t *testing.T, a *arena, out string) bool {
			return not(out, "REMOUNTED") && missing("/usr/harness-attack")
		}},
	{name: "mount --bind over a mask", command: `mount --bind "$WS/public.txt" "$WS/secrets/key.txt" && echo BOUND; umount "$WS/secrets" && echo UNMOUNTED; cat "$WS/secrets/key.txt"`,
		held: func(t *testing.T, a *arena, out string) bool { return not(out, "BOUND", "UNMOUNTED", attackSecret) }},
	{name: "unshare and chroot", command: `unshare -r true && echo UNSHARED; unshare -rm sh -c 'umount -l $WS/secrets; cat $WS/secrets/key.txt' && echo UNSHARED; chroot / true && echo CHROOTED`,
		held: func(t *testing.T, a *arena, out string) bool { return not(out, "UNSHARED", "CHROOTED", attackSecret) }},
	{name: "raw socket", need: "python3", command: `python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print("RAW")'; python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print("RAW")'`,
		held: func(t *testing.T, a *arena, out string) bool { return not(out, "RAW\n") }},
	{name: "/proc/*/root escape", command: `for p in /proc/[0-9]*; do cat $p/root$WS/secrets/key.txt $p/root/proc/$HOSTPID/environ 2>/dev/null; done; [ -e /proc/$HOSTPID ] && echo SEEHOST; [ -e /proc/$CANARY ] && echo SEEHOST; cat /proc/1/environ | tr '\0' '\n' | grep -c sk- `,
		held: func(t *testing.T, a *arena, out string) bool { return not(out, attackSecret, "SEEHOST") }},
	{name: "ptrace a host process", need: "strace", command: `timeout 2 strace -p $HOSTPID -o /dev/null true 2>&1; timeout 2 strace -p $CANARY -o /dev/null 2>&1; cat /proc/$CANARY/mem 2>&1 | head -c 10`,
		held: func(t *testing.T, a *arena, out string) bool { return not(out, "attached") }},
	{name: "signal host processes", command: `kill -9 $HOSTPID $CANARY 2>&1; kill -9 -1 2>&1; kill -9 1; echo sent`,
		held: func(t *testing.T, a *arena, out string) bool {
			return a.canary.Process.Signal(syscall.Signal(0)) == nil
		}},
	{name: "environment secrets", command: `echo "key=$DEEPSEEK_API_KEY token=$GITHUB_TOKEN"; env | grep -c "$(printf 'sk-\x54OP')"; cat /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep -i -e secret -e token`,
		held: func(t *testing.T, a *arena, out string) bool { return not(out, attackSecret) }},
	{name: "read a masked file", command: `cat secrets/key.txt secrets/sub/deep.txt a/b/priv/x.txt sub/.env; grep -r TOPSECRET . ; tar cf - . 2>/dev/null | grep -a TOPSECRET; cp -r secrets /tmp/c 2>&1; cat /tmp/c/* 2>/dev/null; base64 secrets/key.txt | base64 -d; ls -la secrets`,
		held: func(t *testing.T, a *arena, out string) bool { return not(out, attackSecret, " key.txt\n", " sub\n") }},
	{name: "write an Edit-denied path", command: `echo pwn | tee .git/config; sed -i s/core/pwn/ .git/config; cp public.txt .git/config; (cd .git && echo pwn > config); echo pwn > .git/new; rm -f .git/HEAD; mv .git .gitx; ln public.txt .git/hl`,
		held: func(t *testing.T, a *arena, out string) bool {
			return a.read(t, ".git/config") == "[core]\n\tbare = false\n" && missing(filepath.Join(a.ws, ".git/new")) &&
				!missing(filepath.Join(a.ws, ".git/HEAD")) && missing(filepath.Join(a.ws, ".gitx"))
		}},
	{name: "rename a masked path's directory", command: `mv a x 2>&1; mv a/b a/c 2>&1; mv secrets s2 2>&1; mv sub/.env sub/env 2>&1; ls`,
		held: func(t *testing.T, a *arena, out string) bool {
			return a.read(t, "a/b/priv/x.txt") == attackSecret+" priv\n" && !missing(filepath.Join(a.ws, "secrets/key.txt")) &&
				!missing(filepath.Join(a.ws, "sub/.env")) && missing(filepath.Join(a.ws, "x")) && missing(filepath.Join(a.ws, "s2"))
		}},
	{name: "planted symlinks pointing out", command: `ln -s /etc/passwd out1; echo pwn >> out1; [ -n "$OUT" ] && ln -s "$OUT" out2 && echo pwn > out2/keep.txt; ln -s secrets/key.txt lk; cat lk; ln -s /proc/$HOSTPID/root rootlink; ls rootlink/ 2>&1 | head -3`,
		held: func(t *testing.T, a *arena, out string) bool {
			ok := not(out, attackSecret)
			if a.outside != "" {
				b, _ := os.ReadFile(filepath.Join(a.outside, "keep.txt"))
				ok = ok && string(b) == "original\n"
			}
			b, _ := os.ReadFile("/etc/passwd")
			return ok && !strings.Contains(string(b), "pwn")
		}},
	{name: "symlink swapped for a masked path", command: `ln -s public.txt l; (while :; do ln -sfn public.txt l; ln -sfn secrets/key.txt l; done) & end=$((SECONDS+2)); while [ $SECONDS -lt $end ]; do read -r x 2>/dev/null < l && echo "$x"; done | grep -c TOPSECRET; kill %1`,
		held: func(t *testing.T, a *arena, out string) bool {
			return not(out, attackSecret) && strings.HasPrefix(out, "0\n")
		}},
	{name: "host unix sockets", need: "python3", command: `for s in "$WS/app.sock" "$SOCKS/host.sock" /run/*.sock /var/run/docker.sock; do python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("CONNECTED", s.recv(100))' "$s" 2>&1 | tail -1; done`,
		held: func(t *testing.T, a *arena, out string) bool {
			return not(out, "CONNECTED", "hello from the host") && a.accepts.Load() == 0
		}},
	{name: "survivors after the command", command: `setsid sleep 1000.424242 & nohup sleep 1000.424243 >/dev/null 2>&1 & (sleep 1000.424244 &) ; disown -a; echo started`,
		held: func(t *testing.T, a *arena, out string) bool {
			time.Sleep(200 * time.Millisecond)
			for _, tag := range []string{"1000.424242", "1000.424243", "1000.424244"} {
				if len(shelltest.Tagged(tag)) > 0 {
					shelltest.KillTagged(tag)
					return false
				}
			}
			return true
		}},
	{name: "fork bomb", timeout: 3 * time.Second, command: `(b(){ b|b & }; b) 2>/dev/null & sleep 1.5; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo COUNT $n`,
		held: func(t *testing.T, a *arena, out string) bool {
			i := strings.Index(out, "COUNT ")
			if i < 0 {
				return strings.Contains(out, "[timed out") // it could not even count: its forks were refused until the timeout
			}
			n, _ := strconv.Atoi(strings.Fields(out[i+6:])[0])
			return n <= 420
		}},
	{name: "disk filler in /tmp", command: `dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1 | tail -1; dd if=/dev/zero of=/dev/shm/fill bs=1M count=64 2>&1 | tail -1; dd if=/dev/zero of=/dev/fill bs=1M count=1 2>&1 | tail -1; stat -c 'SIZE %s' /tmp/fill /dev/shm/fill`,
		held: func(t *testing.T, a *arena, out string) bool {
			for _, f := range strings.Split(out, "SIZE ")[1:] {
				n, _ := strconv.Atoi(strings.Fields(f)[0])
				if n > 16<<20 {
					return false
				}
			}
			return strings.Count(out, "SIZE ") == 2
		}},
}

// TestSandboxAttacks runs every attack against the bubblewrap sandbox
// with issue 27's rules, as the user the test runs as (root here), and
// as nobody in a user namespace when TestSandboxAttacksUnprivileged runs
// it again that way. Every one must hold.
func TestSandboxAttacks(t *testing.T) {
	needBwrap(t)
	if os.Getenv(attackEnv) != "" {
		require.NotZero(t, os.Geteuid(), "the helper runs unprivileged")
	}
	leakcheck.Check(t)
	a := newArena(t, nil)
	for _, at := range attacks {
		t.Run(at.name, func(t *testing.T) {
			if at.need != "" {
				if _, err := exec.LookPath(at.need); err != nil {
					t.Skipf("%s is not installed", at.need)
				}
			}
			if at.name == "fork bomb" {
				if why := unbounded(a); why != "" {
					t.Skipf("the sandbox cannot bound processes here (%s): a fork bomb would take the machine", why)
				}
			}
			out := a.run(t, at.command, at.timeout)
			assert.True(t, at.held(t, a, out), "the sandbox did not hold:\n%s", out)
		})
	}
}

// unbounded says why the arena's sandbox cannot bound a command's
// processes here, or "".
func unbounded(a *arena) string {
	bw, ok := a.sb.(*bubblewrap)
	if !ok {
		return "not the bubblewrap sandbox"
	}
	c := Config{}.resolve().Containment()
	ns := c.Namespace() && bw.sh != ""
	switch {
	case !bw.root && (ns || bw.prlimit != ""):
		return "" // RLIMIT_NPROC in a user namespace of the command's own
	case !bw.root:
		return "neither sh in the tools' namespace nor prlimit to set RLIMIT_NPROC"
	case !bw.pidMax:
		return "root, and pid_max is not per PID namespace before Linux 6.14"
	case !ns || c.UserNamespace():
		return "root, and the tools make no PID namespace of their own as root: " + c.String()
	}
	return ""
}

// TestSandboxAttacksUnprivileged runs TestSandboxAttacks again as nobody,
// where bubblewrap makes an unprivileged user namespace (and the
// process limit is RLIMIT_NPROC inside it).
func TestSandboxAttacksUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestSandboxAttacks already runs unprivileged")
	}
	needBwrap(t)
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	tmp := filepath.Join(dir, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o700))
	require.NoError(t, os.Chown(tmp, 65534, 65534))
	bin := filepath.Join(dir, "shell.test")
	shelltest.CopyFile(t, self, bin)
	cmd := exec.Command(bin, "-test.run=^TestSandboxAttacks$", "-test.count=1", "-test.v")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), attackEnv+"=1", "HOME="+tmp, "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "bubblewrap unavailable") {
		t.Skipf("no unprivileged user namespace for bubblewrap here: %s", shelltest.LastLine(text))
	}
	require.NoError(t, err, text)
	require.Contains(t, text, "--- PASS: TestSandboxAttacks", text)
	if testing.Verbose() {
		t.Log(text)
	}
}

// boundedBomb stands for the fork bomb where the sandbox may not bound
// processes: 600 sleeps, counted, which a bounded sandbox refuses past its
// limit and an unbounded one runs (a real fork bomb would take the machine).
var boundedBomb = `end=$((SECONDS+15)) i=0; while [ $i -lt 600 ] && [ $SECONDS -lt $end ]; do sleep 30 & i=$((i+1)); done 2>/dev/null; n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; echo COUNT $n`

// TestSandboxAttackReport prints, with HARNESS_ATTACK_REPORT=1, each
// attack's outcome against the sandbox as it was before issue 27 and as it
// is now: the table of the closing note.
func TestSandboxAttackReport(t *testing.T) {
	if os.Getenv("HARNESS_ATTACK_REPORT") == "" {
		t.Skip("set HARNESS_ATTACK_REPORT=1 to print the before/after table")
	}
	needBwrap(t)
	// The old sandbox lets root remount and write the host: clean up.
	cleanHost := func() { os.Remove("/etc/harness-attack"); os.Remove("/usr/harness-attack") }
	t.Cleanup(cleanHost)
	var rows []string
	for _, at := range attacks {
		if at.need != "" {
			if _, err := exec.LookPath(at.need); err != nil {
				continue
			}
		}
		cmd, timeout := at.command, at.timeout
		if at.name == "fork bomb" {
			cmd, timeout = boundedBomb, 20*time.Second
		}
		outcome := func(legacy bool) string {
			// A fresh host for each attack: an attack that broke out
			// changed it.
			var a *arena
			if legacy {
				a = newArena(t, func(ws string, _ *permission.Paths) Sandbox { return legacyBwrap{ws: ws} })
				a.tool = Bash(Config{Sandbox: a.sb, PassEnv: []string{"*"}, Timeouts: Timeouts{KillGrace: time.Second}})
			} else {
				a = newArena(t, nil)
			}
			defer cleanHost()
			out := a.run(t, cmd, timeout)
			if testing.Verbose() {
				t.Logf("%s (before: %v):\n%s", at.name, legacy, out)
			}
			if at.held(t, a, out) {
				return "held"
			}
			return "BROKEN"
		}
		rows = append(rows, fmt.Sprintf("| %s | 1 | %s | %s |", at.name, outcome(true), outcome(false)))
	}
	t.Logf("\n| attack | attempts | before | after |\n|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}
