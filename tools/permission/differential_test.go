package permission

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/go-harness/harness/internal/longtest"
)

// The differential tests compare the policy's view of generated command
// lines with what runs: an independent walk of the syntax tree (every
// CallExpr and Redirect the parser finds, with a plain quote removal
// written here), and bash itself, run in a sandbox with the programs
// replaced by scripts that log their arguments. Where the views differ,
// the policy must ask or deny: it never allows what it did not see.

// diffRules are the differential's rules.
var diffRules = Rules{
	Allow: []string{"Bash(ok1:*)", "Bash(ok2 x:*)", "Bash(echo:*)", "Bash(true)", "Bash(cat:*)", "Bash(find:*)", "Bash(xargs:*)"},
	Deny:  []string{"Bash(pwn:*)", "Edit(./.git/**)", "Read(./secrets/**)"},
}

// allowedRun reports whether the differential's rules allow a program
// run with these arguments.
func allowedRun(prog string, args []string) bool {
	switch prog {
	case "ok1", "echo", "cat", "find", "xargs":
		return true
	case "ls", "head":
		return true // read-only: default mode runs them without a rule
	case "ok2":
		return len(args) > 0 && args[0] == "x"
	case "true":
		return len(args) == 0
	}
	return false
}

// plainWords are a CallExpr's words after a plain quote removal, or
// nil for a word that is not plain text (an expansion, a glob, a brace,
// $'...'), independently of the package's own reading.
func plainWords(c *syntax.CallExpr) []*string {
	var out []*string
	for _, w := range c.Args {
		var b strings.Builder
		ok := true
		for _, p := range w.Parts {
			switch x := p.(type) {
			case *syntax.Lit:
				if strings.ContainsAny(x.Value, "*?[{}~") {
					ok = false
				}
				for i := 0; i < len(x.Value); i++ {
					if x.Value[i] == '\\' && i+1 < len(x.Value) {
						i++
					}
					b.WriteByte(x.Value[i])
				}
			case *syntax.SglQuoted:
				if x.Dollar {
					ok = false
				}
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				if x.Dollar {
					ok = false
				}
				for _, q := range x.Parts {
					l, isLit := q.(*syntax.Lit)
					if !isLit {
						ok = false
						break
					}
					s := l.Value
					for i := 0; i < len(s); i++ {
						if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
							i++
						}
						b.WriteByte(s[i])
					}
				}
			default:
				ok = false
			}
		}
		if ok {
			s := b.String()
			out = append(out, &s)
		} else {
			out = append(out, nil)
		}
	}
	return out
}

// viewHas reports whether the view holds a command with these words.
func viewHas(v *bashView, words []*string) bool {
	for _, c := range v.cmds {
		if len(c.words) != len(words) {
			continue
		}
		same := true
		for i, w := range words {
			if w != nil && (!c.words[i].static || c.words[i].text != *w) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

func TestDifferentialAST(t *testing.T) {
	n := longtest.Pick(3000, 100000)
	ws := attackWorkspace(t)
	pd, err := New(Rules{Allow: diffRules.Allow, Deny: diffRules.Deny, Home: ws + "/home"})
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := New(Rules{Allow: diffRules.Allow, Deny: diffRules.Deny, Mode: ModeBypass, Home: ws + "/home"})
	g := newLineGen(1, "/opt/bin")
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	mismatches, unparsed := 0, 0
	for i := range n {
		line := g.line()
		dd := pd.Decide(call(ws, "bash", map[string]any{"command": line}))
		db := pb.Decide(call(ws, "bash", map[string]any{"command": line}))
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("line %d %q: %s\ndefault: %s %s\nbypass: %s %s", i, line, fmt.Sprintf(format, args...), dd.Outcome, dd.Reason, db.Outcome, db.Reason)
		}
		f, err := parser.Parse(strings.NewReader(line), "")
		if err != nil {
			unparsed++
			if dd.Outcome == Allow {
				fail("allowed a line the parser refuses (%v)", err)
			}
			continue
		}
		v := parseBash(line, shellEnv{dir: ws, ws: ws, home: ws + "/home"})
		syntax.Walk(f, func(node syntax.Node) bool {
			switch x := node.(type) {
			case *syntax.CallExpr:
				words := plainWords(x)
				if len(words) == 0 {
					return true
				}
				if !viewHas(v, words) && words[0] != nil {
					mismatches++
					if os.Getenv("DIFF_SHOW") != "" && mismatches < 20 {
						t.Logf("mismatch: %s in %q", printWords(words), line)
					}
					if dd.Outcome == Allow {
						fail("the view lacks the command %s, and the line is allowed", printWords(words))
					}
				}
				switch {
				case words[0] == nil:
					if dd.Outcome == Allow {
						fail("a command whose name is not plain text is allowed")
					}
					raw := line[x.Args[0].Pos().Offset():x.Args[0].End().Offset()]
					if strings.Contains(strings.NewReplacer("'", "", `"`, "", `\`, "").Replace(raw), "pwn") && (dd.Outcome != Deny || db.Outcome != Deny) {
						fail("a command whose name may be pwn is not denied")
					}
				case *words[0] == "pwn":
					if dd.Outcome != Deny || db.Outcome != Deny {
						fail("pwn runs and is not denied")
					}
				case *words[0] == "ask1":
					if dd.Outcome == Allow {
						fail("ask1 runs and the line is allowed")
					}
				}
			case *syntax.Redirect:
				if x.Word != nil && strings.Contains(x.Word.Lit(), ".git/") && x.Op != syntax.RdrIn && x.Op != syntax.WordHdoc {
					if dd.Outcome != Deny || db.Outcome != Deny {
						fail("a redirection into .git is not denied")
					}
				}
			}
			return true
		})
		if t.Failed() {
			break
		}
	}
	t.Logf("%d lines: %d the parser refuses, %d commands the view holds differently (each asked or denied)", n, unparsed, mismatches)
}

func printWords(ws []*string) string {
	var out []string
	for _, w := range ws {
		if w == nil {
			out = append(out, "<dynamic>")
		} else {
			out = append(out, *w)
		}
	}
	return strings.Join(out, " ")
}

// shim is a program of the differential: it logs its name and
// arguments, one run a line, and succeeds.
const shim = `#!/bin/sh
n=${0##*/}
for a in "$@"; do n="$n	$a"; done
printf '%s\n' "$n" >> "$LOG"
`

// driver runs each case directory's line with bash in its workspace.
// The programs are also bash functions (bash finds a function before a
// file, and calls it without starting a process), exported so the
// shells the lines start have them too.
const driver = `#!/bin/bash
unset OLDPWD
export PATH="$BIN:/usr/bin:/bin" X=a
for f in ok1 ok2 ask1 pwn ls head; do
  eval "$f() { local n=$f a; for a in \"\$@\"; do n=\"\$n	\$a\"; done; printf '%s\n' \"\$n\" >> \"\$LOG\"; }"
  export -f $f
done
for d in "$@"; do
  cd "$d/ws" || continue
  LOG="$d/log" HOME="$d/home" timeout -k 1 5 bash -c "$(<"$d/line")" </dev/null >/dev/null 2>&1
  unset OLDPWD
done
`

func TestDifferentialBash(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap is not installed: the generated lines run only in a sandbox")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if out, err := exec.Command(bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "true").CombinedOutput(); err != nil {
		t.Skipf("bubblewrap cannot start a sandbox here: %v %s", err, out)
	}
	n := longtest.Pick(50, 3000)
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	must(t, os.MkdirAll(bin, 0o755))
	for _, name := range []string{"ok1", "ok2", "ask1", "pwn", "ls", "head"} {
		must(t, os.WriteFile(filepath.Join(bin, name), []byte(shim), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(root, "driver.sh"), []byte(driver), 0o755))
	g := newLineGen(2, bin)
	type kase struct {
		dir, line string
	}
	var cases []kase
	for i := range n {
		d := filepath.Join(root, "c", fmt.Sprint(i))
		for _, sub := range []string{"ws/.git", "ws/secrets", "home"} {
			must(t, os.MkdirAll(filepath.Join(d, sub), 0o755))
		}
		line := g.line()
		must(t, os.WriteFile(filepath.Join(d, "line"), []byte(line), 0o644))
		cases = append(cases, kase{dir: d, line: line})
	}
	const batch = 250
	for start := 0; start < len(cases); start += batch {
		end := min(start+batch, len(cases))
		args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", root, root,
			"--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session", "--setenv", "BIN", bin, "bash", filepath.Join(root, "driver.sh")}
		for _, c := range cases[start:end] {
			args = append(args, c.dir)
		}
		cmd := exec.Command(bwrap, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the sandbox failed: %v %s", err, out)
		}
	}
	ran := 0
	for i, c := range cases {
		ws := filepath.Join(c.dir, "ws")
		pd, _ := New(Rules{Allow: diffRules.Allow, Deny: diffRules.Deny, Home: filepath.Join(c.dir, "home")})
		pb, _ := New(Rules{Allow: diffRules.Allow, Deny: diffRules.Deny, Mode: ModeBypass, Home: filepath.Join(c.dir, "home")})
		dd := pd.Decide(call(ws, "bash", map[string]any{"command": c.line}))
		db := pb.Decide(call(ws, "bash", map[string]any{"command": c.line}))
		runs := readRuns(t, filepath.Join(c.dir, "log"))
		ran += len(runs)
		for _, r := range runs {
			switch {
			case r[0] == "pwn" && (dd.Outcome != Deny || db.Outcome != Deny):
				t.Errorf("case %d: bash ran pwn %q, and the policy said %s (default) / %s (bypass): %s\n%s", i, r[1:], dd.Outcome, db.Outcome, dd.Reason, c.line)
			case !allowedRun(r[0], r[1:]) && dd.Outcome == Allow:
				t.Errorf("case %d: bash ran %q, which no rule allows, and the line was allowed: %s\n%s", i, r, dd.Reason, c.line)
			}
		}
		entries, _ := os.ReadDir(filepath.Join(ws, ".git"))
		if len(entries) > 0 && (dd.Outcome != Deny || db.Outcome != Deny) {
			t.Errorf("case %d: bash wrote %s into .git, and the policy said %s / %s: %s\n%s", i, entries[0].Name(), dd.Outcome, db.Outcome, dd.Reason, c.line)
		}
		if t.Failed() {
			break
		}
	}
	if ran == 0 {
		t.Fatal("no generated line ran a program: the sandbox or the shims do not work")
	}
	t.Logf("%d lines ran %d programs under bash", n, ran)
}

func readRuns(t *testing.T, p string) [][]string {
	f, err := os.Open(p)
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err)
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, strings.Split(sc.Text(), "\t"))
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
