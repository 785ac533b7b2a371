package permission

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// TestReadOnlyCommands is the table of command lines in default mode
// with no rule: read-only ones run without asking, and their reason
// does not speak of side effects; anything else asks, and a Read deny
// rule still denies a read-only command that names its path.
func TestReadOnlyCommands(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "secrets"), 0o755))
	p, err := New(Rules{Deny: []string{"Read(./secrets/**)"}, Ask: []string{"Read(./.env)"}})
	require.NoError(t, err)
	cases := []struct {
		cmd  string
		want Outcome
	}{
		// Read-only lines run.
		{"ls", Allow},
		{"ls -la src", Allow},
		{"cat main.go", Allow},
		{"head -n 20 main.go", Allow},
		{"tail -n 5 log.txt", Allow},
		{"wc -l *.go", Allow},
		{"pwd", Allow},
		{"git status", Allow},
		{"git status --short", Allow},
		{"git diff HEAD~1 -- main.go", Allow},
		{"git log --oneline -n 5", Allow},
		{"git show HEAD:main.go", Allow},
		{"grep -rn TODO .", Allow},
		{"rg -n 'func main' --type go", Allow},
		{"find . -name '*.go' -type f", Allow},
		{"ls | grep foo", Allow},
		{"cd src && ls", Allow},
		{"cat a.go | head -n 3 | wc -l", Allow},
		{"ls 2>/dev/null", Allow},
		{"ls 2>&1 | head", Allow},
		{"cat < main.go", Allow},
		{"echo hello", Allow},
		{"diff a.go b.go", Allow},
		{"stat main.go; du -sh .", Allow},
		// Output redirection, substitution, other programs: they ask.
		{"ls > out.txt", Ask},
		{"cat a >> b", Ask},
		{"echo hi &> log", Ask},
		{"ls $(touch x)", Ask},
		{"cat <(make)", Ask},
		{"echo $(date)", Ask},
		{"ls; touch x", Ask},
		{"ls | sh", Ask},
		{"ls | xargs cat", Ask},
		{"find . -delete", Ask},
		{"find . -exec cat {} ;", Ask},
		{"find . -fprint out", Ask},
		{"find $X", Ask},
		{"find *.go", Ask},
		{"find *", Deny}, // the glob may name the denied directory
		{"rg --pre sh x", Ask},
		{"rg --pre=./evil x", Ask},
		{"rg -z x", Ask},
		{"rg --hostname-bin=./evil x", Ask},
		{"git push", Ask},
		{"git diff --output=patch", Ask},
		{"git diff --out=patch", Ask},
		{"git log --oneline --ou=patch", Ask},
		{"git diff --ext-diff", Ask},
		{"git -c core.pager=sh log", Ask},
		{"git -C /tmp status", Ask},
		{"git", Ask},
		{"tree -o listing.txt", Ask},
		{"file -C -m magic", Ask},
		{"sort -o x y", Ask},
		{"uniq a b", Ask},
		{"LD_PRELOAD=./x.so ls", Ask},
		{"env ls", Ask},
		{"timeout 5 cat x", Ask},
		{"./ls", Ask},
		{"/tmp/bin/cat x", Ask},
		{"$CMD x", Ask},
		{"'l''s'; rm x", Ask},
		{"ls() { touch x; }; ls", Ask},
		{"eval ls", Ask},
		{"bash -c ls", Ask},
		{"ls 'x", Ask},
		{"HOME=/x; cat ~/.ssh/id_rsa", Ask},
		// Read rules still hold.
		{"cat secrets/key", Deny},
		{"grep -r token secrets", Deny},
		{"ls secrets", Deny},
		{"cat .env", Ask},
	}
	for _, c := range cases {
		d := p.Decide(call(ws, "bash", map[string]any{"command": c.cmd}))
		assert.Equal(t, c.want, d.Outcome, "%q: %s", c.cmd, d.Reason)
		if c.want == Allow {
			assert.Contains(t, d.Reason, "only reads: read-only commands run without asking", c.cmd)
			assert.NotContains(t, d.Reason, "side effects", c.cmd)
			assert.Empty(t, d.Suggest, c.cmd)
		}
	}
}

// Read-only lines run in accept-edits mode too; plan mode still denies
// every command, and a persistent shell asks (an earlier command may
// have redefined a name). A command ask rule still asks.
func TestReadOnlyModesAndShells(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		mode Mode
		ask  []string
		tool string
		cmd  string
		want Outcome
	}{
		{ModeAcceptEdits, nil, "bash", "git status", Allow},
		{ModePlan, nil, "bash", "ls", Deny},
		{ModeDefault, nil, "shell_send", "ls", Ask},
		{ModeDefault, []string{"Bash(git:*)"}, "bash", "git status", Ask},
		{ModeDefault, nil, "bash", "ls; git status --ours", Ask},
		{ModeBypass, nil, "bash", "ls", Allow},
	} {
		p, err := New(Rules{Mode: c.mode, Ask: c.ask})
		require.NoError(t, err)
		args := map[string]any{"command": c.cmd}
		if c.tool == "shell_send" {
			args = map[string]any{"shell_id": "s1", "command": c.cmd}
		}
		d := p.Decide(call(ws, c.tool, args))
		assert.Equal(t, c.want, d.Outcome, "%s %s %s: %s", c.mode, c.tool, c.cmd, d.Reason)
	}
}

// readOnlyNames is the fuzz test's own list of read-only programs,
// written apart from the policy's.
var readOnlyNames = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "pwd": true, "echo": true, "printf": true,
	"grep": true, "egrep": true, "fgrep": true, "stat": true, "du": true, "df": true, "which": true,
	"basename": true, "dirname": true, "realpath": true, "readlink": true, "diff": true, "cmp": true,
	"md5sum": true, "sha1sum": true, "sha256sum": true, "sha512sum": true, "cut": true, "nl": true, "tac": true,
	"rev": true, "whoami": true, "id": true, "uname": true, "printenv": true, "true": true, "false": true,
	"test": true, "[": true, "cd": true, "rg": true, "find": true, "git": true, "tree": true, "file": true,
}

// FuzzReadOnly decides any command line in default mode with no allow
// rule and checks what it allows against an independent walk of the
// parser's tree: every command of an allowed line is a plain read-only
// program with plain arguments where they matter (a function's body
// included), no redirection writes a file (but /dev/null), no variable
// is assigned, and a line naming the denied directory is never allowed.
func FuzzReadOnly(f *testing.F) {
	for _, s := range []string{"ls", "ls -la | grep x", "cat a > b", "find . -delete", "git status", "git push",
		"rg --pre sh x", "echo $(rm x)", "cat secrets/k", "ls 2>/dev/null", "f() { ls; }; f", "X=1 ls", "cd /; cat etc/passwd",
		"ls >&2", "ls >&out", "cat <<EOF\nx\nEOF", "ls &> x", "ls >| x", "ls <> x", "{ ls; } > x", "(cat x) > y"} {
		f.Add(s)
	}
	ws := "/nonexistent/ws"
	p, err := New(Rules{Deny: []string{"Read(./secrets/**)"}, Home: "/nonexistent/home"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ToValidUTF8(line, "\uFFFD")
		d := p.Decide(call(ws, "bash", map[string]any{"command": line}))
		if d.Outcome != Allow {
			return
		}
		if strings.Contains(d.Reason, "side effects") {
			t.Fatalf("allowed %q with a reason about side effects: %s", line, d.Reason)
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
		if err != nil || strings.IndexByte(line, 0) >= 0 {
			t.Fatalf("allowed %q, which the parser refuses (%v)", line, err)
		}
		calls := 0
		syntax.Walk(file, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.CallExpr:
				if len(x.Assigns) > 0 {
					t.Fatalf("allowed %q, which assigns a variable", line)
				}
				if len(x.Args) == 0 {
					return true
				}
				calls++
				words := plainWords(x)
				for _, w := range words[1:] {
					if w == nil {
						continue
					}
					if c := path.Clean(*w); c == "secrets" || strings.HasPrefix(c, "secrets/") || strings.HasPrefix(c, ws+"/secrets") {
						t.Fatalf("allowed %q, which names the denied directory: %s", line, d.Reason)
					}
				}
				if raw := line[x.Args[0].Pos().Offset():x.Args[0].End().Offset()]; raw == "[" {
					return true // test's other name, which plainWords takes for a glob
				}
				if words[0] == nil || !readOnlyNames[*words[0]] {
					t.Fatalf("allowed %q, whose command `%s` is not a plain read-only program", line, line[x.Args[0].Pos().Offset():x.Args[0].End().Offset()])
				}
				switch *words[0] {
				case "find", "rg", "git", "tree", "file":
					for _, w := range words[1:] {
						if w == nil {
							t.Fatalf("allowed %q, where %s has an argument known only when it runs", line, *words[0])
						}
						switch *w {
						case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls", "push", "-o", "-C":
							t.Fatalf("allowed %q, where %s has the argument %s", line, *words[0], *w)
						}
						if strings.HasPrefix(*w, "--pre") || strings.HasPrefix(*w, "--ou") || *w == "--o" || strings.HasPrefix(*w, "--ext") {
							t.Fatalf("allowed %q, where %s has the argument %s", line, *words[0], *w)
						}
					}
				}
			case *syntax.DeclClause:
				t.Fatalf("allowed %q, which declares variables", line)
			case *syntax.Redirect:
				switch x.Op {
				case syntax.RdrIn, syntax.DplIn, syntax.DplOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
					if x.Op == syntax.DplOut && x.Word != nil && x.Word.Lit() != "" && strings.Trim(x.Word.Lit(), "0123456789-") != "" {
						t.Fatalf("allowed %q, whose redirection >& writes a file", line)
					}
				default:
					if x.Word == nil || x.Word.Lit() != "/dev/null" {
						t.Fatalf("allowed %q, whose redirection writes a file", line)
					}
				}
			}
			return true
		})
		if calls == 0 {
			t.Fatalf("allowed %q, which runs no command", line)
		}
	})
}

// A bare redirection runs no command but truncates or creates its file:
// it asks in default mode (it was allowed).
func TestBareRedirectionAsks(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{})
	require.NoError(t, err)
	for _, cmd := range []string{"> out.txt", ">> log", "< in", "2> err"} {
		d := p.Decide(call(ws, "bash", map[string]any{"command": cmd}))
		assert.Equal(t, Ask, d.Outcome, "%q: %s", cmd, d.Reason)
	}
}
