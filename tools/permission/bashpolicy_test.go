package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bashCase is one command line decided under some rules, in one mode.
type bashCase struct {
	name             string
	mode             Mode
	allow, ask, deny []string
	cmd              string
	// workdir is the bash tool's workdir argument.
	workdir string
	want    Outcome
	rule    string
}

func runBashCases(t *testing.T, ws, home string, cases []bashCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(Rules{Allow: c.allow, Ask: c.ask, Deny: c.deny, Mode: c.mode, Home: home})
			require.NoError(t, err)
			args := map[string]any{"command": c.cmd}
			if c.workdir != "" {
				args["workdir"] = c.workdir
			}
			d := p.Decide(call(ws, "bash", args))
			assert.Equal(t, c.want, d.Outcome, "%q: %s", c.cmd, d.Reason)
			if c.rule != "" {
				assert.Equal(t, c.rule, d.Rule, d.Reason)
			}
			assert.NotEmpty(t, d.Reason)
		})
	}
}

// TestBashRuleKinds decides commands by each kind of Bash rule.
func TestBashRuleKinds(t *testing.T) {
	ws := t.TempDir()
	rm := []string{"Bash(rm:*)"}
	runBashCases(t, ws, t.TempDir(), []bashCase{
		// Prefix rules.
		{name: "prefix", allow: []string{"Bash(go test:*)"}, cmd: "go test ./...", want: Allow, rule: "Bash(go test:*)"},
		{name: "prefix with space star", allow: []string{"Bash(go test *)"}, cmd: "go test ./...", want: Allow},
		{name: "prefix is word-wise", allow: []string{"Bash(go test:*)"}, cmd: "go testx", want: Ask},
		{name: "prefix needs its words plain", allow: []string{"Bash(go test:*)"}, cmd: "go $'test'", want: Ask},
		{name: "prefix allows later expansions", allow: []string{"Bash(go test:*)"}, cmd: `go test "$PKG" $(go list ./...)`, want: Ask},
		{name: "prefix allows them when their commands are", allow: []string{"Bash(go test:*)", "Bash(go list:*)"}, cmd: `go test "$PKG" $(go list ./...)`, want: Allow},
		{name: "a program by path is not its name for allow", allow: []string{"Bash(go test:*)"}, cmd: "/usr/bin/go test", want: Ask},
		// Exact rules.
		{name: "exact", allow: []string{"Bash(git status)"}, cmd: "git status", want: Allow},
		{name: "exact refuses more", allow: []string{"Bash(git push)"}, cmd: "git push -f", want: Ask}, // git status -s is read-only
		{name: "exact refuses an expansion", allow: []string{"Bash(git status)"}, cmd: "git status $X", want: Ask},
		{name: "exact quoted", allow: []string{"Bash(git status)"}, cmd: `"git" 'status'`, want: Allow},
		// Glob rules.
		{name: "glob", allow: []string{"Bash(git * --help)"}, cmd: "git log --help", want: Allow},
		{name: "glob refuses an expansion", allow: []string{"Bash(git * --help)"}, cmd: "git $X --help", want: Ask},
		{name: "glob deny matches an expansion", deny: []string{"Bash(git * --force)"}, cmd: "git push $X --force", want: Deny},
		// Deny rules see through everything.
		{name: "deny", deny: rm, cmd: "rm -rf x", want: Deny, rule: "Bash(rm:*)"},
		{name: "deny by path", deny: rm, cmd: "/bin/rm x", want: Deny},
		{name: "deny by relative path", deny: rm, cmd: "./rm x", want: Deny},
		{name: "deny quoted", deny: rm, cmd: `r"m" x`, want: Deny},
		{name: "deny escaped", deny: rm, cmd: `\rm x`, want: Deny},
		{name: "deny ANSI-C", deny: rm, cmd: `$'\x72\x6d' x`, want: Deny},
		{name: "deny glob program", deny: rm, cmd: "/bin/r? x", want: Deny},
		{name: "deny brace program", deny: rm, cmd: "{rm,x}", want: Deny},
		{name: "deny expansion program", deny: rm, cmd: "$X x", want: Deny},
		{name: "deny substitution program", deny: rm, cmd: "`echo rm` x", want: Deny},
		{name: "deny expansion that may vanish", deny: rm, cmd: "$X rm x", want: Deny},
		{name: "deny a word split in two", deny: []string{"Bash(git push:*)"}, cmd: `git $CMD origin`, want: Deny},
		{name: "deny not a prefix of another name", deny: rm, cmd: "rmdir x", want: Ask},
		{name: "deny not an argument", deny: rm, cmd: "echo rm", want: Allow}, // echo is read-only
		{name: "deny not in single quotes", deny: rm, cmd: `echo '$(rm x)'`, want: Allow},
		{name: "deny exact through xargs", deny: []string{"Bash(rm x)"}, cmd: "echo x | xargs rm", want: Deny},
		{name: "deny exact after a program that may be eval", deny: []string{"Bash(rm -rf /)"}, cmd: "$X 'rm -rf /'", want: Deny},
		{name: "deny a name that cannot be it", deny: rm, cmd: `"$HOME/bin/tool" x`, want: Ask},
		{name: "deny sees assignments through", deny: rm, cmd: "FOO=1 rm x", want: Deny},
		// Ask rules.
		{name: "ask beats allow", allow: []string{"Bash(git:*)"}, ask: []string{"Bash(git push:*)"}, cmd: "git push", want: Ask, rule: "Bash(git push:*)"},
		{name: "ask matches an expansion", allow: []string{"Bash(git:*)"}, ask: []string{"Bash(git push:*)"}, cmd: "git $X", want: Ask, rule: "Bash(git push:*)"},
		{name: "deny beats ask", ask: []string{"Bash(rm:*)"}, deny: rm, cmd: "rm x", want: Deny},
		// Rules on the whole tool.
		{name: "Bash allows all", allow: []string{"Bash"}, cmd: "for x in $(ls); do $x; done > /etc/x", want: Allow},
		{name: "Bash(*) allows all", allow: []string{"Bash(*)"}, cmd: "eval \"$X\"", want: Allow},
		{name: "deny the tool", deny: []string{"bash"}, cmd: "ls", want: Deny},
		{name: "ask the tool", allow: []string{"Bash(ls:*)"}, ask: []string{"Bash"}, cmd: "ls", want: Ask},
		{name: "Bash allows all but deny", allow: []string{"Bash"}, deny: rm, cmd: "ls; rm x", want: Deny},
		{name: "code the rules cannot see under a deny rule", allow: []string{"Bash"}, deny: rm, cmd: `eval "$X"`, want: Deny},
		{name: "code the rules cannot see under an ask rule", allow: []string{"Bash"}, ask: []string{"Bash(git push:*)"}, cmd: `eval "$X"`, want: Ask},
	})
}

// TestBashWrappers checks that deny rules see through wrappers, and
// what allows a wrapped command.
func TestBashWrappers(t *testing.T) {
	ws := t.TempDir()
	rm := []string{"Bash(rm:*)"}
	npm := []string{"Bash(npm test:*)"}
	var cases []bashCase
	for _, cmd := range []string{
		"timeout 5 rm x", "timeout -k 1 -s TERM 5s rm x", "timeout --signal=KILL 5 rm x", "nice rm x", "nice -n 5 rm x",
		"nice -5 rm x", "nice --adjustment=5 rm x", "nohup rm x", "env rm x", "env -i rm x", "env -u X rm x",
		"env - A=1 rm x", "env -C /tmp rm x", "xargs rm", "xargs -0 -n1 -P4 rm", "xargs -I{} rm {}", "time rm x",
		"time -p rm x", "command time -v rm x", "stdbuf -o0 rm x", "stdbuf -oL -e0 rm x", "command rm x",
		"command -p rm x", "builtin eval 'rm x'", "exec rm x", "sudo rm x", "sudo -u root -E rm x", "sudo --user=root rm x",
		"doas rm x", "ionice -c2 -n7 rm x", "chrt -b 0 rm x", "setsid -f rm x", "taskset -c 0 rm x", "unbuffer rm x",
		"flock /tmp/l rm x", "flock -w 5 /tmp/l -c 'rm x'", "watch rm x", "watch -n 1 'rm x'", "busybox rm x",
		"find . -exec rm {} ;", "find . -name '*.o' -execdir rm {} +", "find . -ok rm {} ;",
		"bash -c 'rm x'", "sh -c 'rm x'", "bash -lc 'rm x'", "bash -o pipefail -c 'rm x'", "bash --norc -c 'rm x'",
		"zsh -c 'rm x'", "eval rm x", "eval 'rm x'", "bash <<EOF\nrm x\nEOF", "sh <<< 'rm x'", "su -c 'rm x'",
		"runuser -u u -- rm x", "script -c 'rm x' /dev/null", "trap 'rm x' EXIT", "alias x='rm x'",
		"timeout 5 nice -n 1 env A=1 rm x", "sudo timeout 5 bash -c 'eval rm x'", "parallel rm ::: a b",
		"source /dev/stdin <<< 'rm x'", ". <(echo rm x)",
	} {
		cases = append(cases, bashCase{name: "deny " + cmd, allow: []string{"Bash"}, deny: rm, cmd: cmd, want: Deny, rule: "Bash(rm:*)"},
			bashCase{name: "bypass " + cmd, mode: ModeBypass, deny: rm, cmd: cmd, want: Deny})
	}
	cases = append(cases,
		// An option the rules do not know: the rest is not modelled.
		bashCase{name: "unknown option asks", allow: []string{"Bash(timeout:*)", "Bash(ls:*)"}, cmd: "timeout --bogus 5 ls", want: Ask},
		bashCase{name: "unknown option still denies", allow: []string{"Bash"}, deny: rm, cmd: "timeout --bogus 5 rm x", want: Deny},
		bashCase{name: "an unmodelled runner denies", allow: []string{"Bash"}, deny: rm, cmd: "strace -f rm x", want: Deny},
		bashCase{name: "an unmodelled runner asks", allow: []string{"Bash(strace:*)", "Bash(ls:*)"}, cmd: "strace -f ls", want: Ask},
		bashCase{name: "env -S is not modelled", allow: []string{"Bash"}, deny: rm, cmd: "env -S 'rm x'", want: Deny},
		// Transparent wrappers need no rule of their own.
		bashCase{name: "timeout npm test", allow: npm, cmd: "timeout 60 npm test", want: Allow},
		bashCase{name: "nice npm test", allow: npm, cmd: "nice -n 5 npm test", want: Allow},
		bashCase{name: "env npm test", allow: npm, cmd: "env -u CI npm test", want: Allow},
		bashCase{name: "env assignments must be named", allow: npm, cmd: "env CI=1 npm test", want: Ask},
		bashCase{name: "bash -c npm test", allow: npm, cmd: "bash -c 'npm test'", want: Allow},
		bashCase{name: "eval npm test", allow: npm, cmd: "eval npm test", want: Allow},
		bashCase{name: "a rule on a transparent wrapper does not allow what it runs", allow: []string{"Bash(timeout:*)"}, cmd: "timeout 5 rm x", want: Ask},
		// Other wrappers need both, or a rule naming both.
		bashCase{name: "sudo needs its rule", allow: []string{"Bash(apt install:*)"}, cmd: "sudo apt install x", want: Ask},
		bashCase{name: "sudo and the command", allow: []string{"Bash(sudo:*)", "Bash(apt install:*)"}, cmd: "sudo apt install x", want: Allow},
		bashCase{name: "sudo alone does not allow the command", allow: []string{"Bash(sudo:*)"}, cmd: "sudo rm x", want: Ask},
		bashCase{name: "a rule naming both", allow: []string{"Bash(sudo apt install:*)"}, cmd: "sudo apt install x", want: Allow},
		bashCase{name: "xargs and grep", allow: []string{"Bash(xargs:*)", "Bash(grep:*)"}, cmd: "ls | xargs grep x", want: Ask},
		bashCase{name: "xargs, grep and ls", allow: []string{"Bash(xargs:*)", "Bash(grep:*)", "Bash(ls:*)"}, cmd: "ls | xargs grep x", want: Allow},
		bashCase{name: "find alone", allow: []string{"Bash(find:*)"}, cmd: "find . -name '*.go'", want: Allow},
		bashCase{name: "find -exec needs the command", allow: []string{"Bash(find:*)"}, cmd: "find . -exec sed -n 1p {} +", want: Ask},
		bashCase{name: "find -exec with both", allow: []string{"Bash(find:*)", "Bash(sed:*)"}, cmd: "find . -exec sed -n 1p {} +", want: Allow},
		bashCase{name: "git global options", allow: []string{"Bash(git status)"}, cmd: "git -C sub --no-pager status", want: Allow},
		bashCase{name: "git -C outside", allow: []string{"Bash(git status)"}, cmd: "git -C /etc status", want: Ask},
		bashCase{name: "git -c a command", allow: []string{"Bash(git log:*)"}, cmd: "git -c core.pager='sh -c x' log", want: Ask},
		bashCase{name: "git -c a command under deny", allow: []string{"Bash(git log:*)"}, deny: rm, cmd: "git -c core.pager='rm x' log", want: Deny},
		bashCase{name: "git deny through options", allow: []string{"Bash"}, deny: []string{"Bash(git push:*)"}, cmd: "git -C . -c user.name=x push", want: Deny},
		bashCase{name: "command -v runs nothing", allow: []string{"Bash(command -v:*)"}, deny: rm, cmd: "command -v rm", want: Allow},
		bashCase{name: "a shell script file", allow: []string{"Bash(bash script.sh)"}, cmd: "bash script.sh", want: Allow},
		bashCase{name: "a shell reading a pipe", allow: []string{"Bash"}, deny: rm, cmd: "cat x | sh", want: Deny},
		bashCase{name: "a shell reading a file", allow: []string{"Bash(sh:*)"}, deny: rm, cmd: "sh < x.sh", want: Allow},
	)
	runBashCases(t, ws, t.TempDir(), cases)
}

// TestBashPaths checks the files commands name, write and redirect to,
// against Read and Edit rules, wherever the shell is.
func TestBashPaths(t *testing.T) {
	ws := t.TempDir()
	home := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"secrets", ".git", "src/sub"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.Symlink(filepath.Join(ws, ".git"), filepath.Join(ws, "gitlink")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "escape")))
	read := []string{"Read(./secrets/**)"}
	edit := []string{"Edit(./.git/**)"}
	all := []string{"Bash"}
	runBashCases(t, ws, home, []bashCase{
		// Read deny on any word.
		{name: "cat", allow: all, deny: read, cmd: "cat secrets/key", want: Deny, rule: "Read(./secrets/**)"},
		{name: "absolute", allow: all, deny: read, cmd: "cat " + ws + "/secrets/key", want: Deny},
		{name: "dot dot", allow: all, deny: read, cmd: "cat src/../secrets/key", want: Deny},
		{name: "directory", allow: all, deny: read, cmd: "grep -r x secrets", want: Deny},
		{name: "option value", allow: all, deny: read, cmd: "cmd --input=secrets/key", want: Deny},
		{name: "attached option", allow: all, deny: read, cmd: "tar -Csecrets -cf - .", want: Deny},
		{name: "dd if=", allow: all, deny: read, cmd: "dd if=secrets/key", want: Deny},
		{name: "glob", allow: all, deny: read, cmd: "cat secret?/key", want: Deny},
		{name: "glob over the directory", allow: all, deny: read, cmd: "grep -r x *", want: Deny},
		{name: "glob that cannot match", allow: all, deny: read, cmd: "cat *.go", want: Allow},
		{name: "glob skips dot files", allow: all, deny: []string{"Read(.env)"}, cmd: "cat *", want: Allow},
		{name: "expansion under the directory", allow: all, deny: read, cmd: `cat secrets/"$f"`, want: Deny},
		{name: "expansion anywhere is the sandbox's", allow: all, deny: read, cmd: `cat "$f"`, want: Allow},
		{name: "after cd", allow: all, deny: read, cmd: "cd secrets && cat key", want: Deny},
		{name: "after cd to an expansion, from the start", allow: all, deny: read, cmd: `cd "$d" && cat secrets/key`, want: Deny},
		{name: "after cd to an expansion, anywhere", allow: all, deny: read, cmd: `cd "$d" && cat key`, want: Ask},
		{name: "in a workdir", allow: all, deny: read, workdir: "src", cmd: "cat ../secrets/key", want: Deny},
		{name: "home", allow: all, deny: []string{"Read(~/.ssh/**)"}, cmd: "cat ~/.ssh/id_rsa", want: Deny},
		{name: "home by path", allow: all, deny: []string{"Read(~/.ssh/**)"}, cmd: "cat " + home + "/.ssh/id_rsa", want: Deny},
		{name: "read redirect", allow: all, deny: read, cmd: "wc -l < secrets/key", want: Deny},
		{name: "a name that is not the directory", allow: all, deny: read, cmd: "ls secretsx", want: Allow},
		{name: "read ask", allow: all, ask: read, cmd: "cat secrets/key", want: Ask, rule: "Read(./secrets/**)"},
		{name: "running a denied file", allow: all, deny: read, cmd: "./secrets/run.sh", want: Deny},
		// Edit rules on writes.
		{name: "redirect", allow: all, deny: edit, cmd: "echo x > .git/config", want: Deny, rule: "Edit(./.git/**)"},
		{name: "redirect through a link", allow: all, deny: edit, cmd: "echo x > gitlink/config", want: Deny},
		{name: "tee", allow: all, deny: edit, cmd: "echo x | tee -a .git/config", want: Deny},
		{name: "sed -i", allow: all, deny: edit, cmd: "sed -i.bak s/a/b/ .git/config", want: Deny},
		{name: "sed -n is no write", allow: all, deny: edit, cmd: "sed -n 1p .git/config", want: Allow},
		{name: "cp destination", allow: all, deny: edit, cmd: "cp x .git/config", want: Deny},
		{name: "cp into the directory", allow: all, deny: edit, cmd: "cp -r x .git", want: Deny},
		{name: "cp -t", allow: all, deny: edit, cmd: "cp -t .git x", want: Deny},
		{name: "cp source is no write", allow: all, deny: edit, cmd: "cp .git/config x", want: Allow},
		{name: "cp -s source is a link", allow: all, deny: edit, cmd: "cp -s .git/config x", want: Deny},
		{name: "mv source", allow: all, deny: edit, cmd: "mv .git/config x", want: Deny},
		{name: "ln target", allow: all, deny: edit, cmd: "ln -s .git/config x", want: Deny},
		{name: "rm", allow: all, deny: edit, cmd: "rm -rf .git", want: Deny},
		{name: "touch", allow: all, deny: edit, cmd: "touch -d now .git/x", want: Deny},
		{name: "chmod", allow: all, deny: edit, cmd: "chmod -R u+w .git", want: Deny},
		{name: "truncate", allow: all, deny: edit, cmd: "truncate -s 0 .git/index", want: Deny},
		{name: "dd of=", allow: all, deny: edit, cmd: "dd if=x of=.git/config", want: Deny},
		{name: "mkdir", allow: all, deny: edit, cmd: "mkdir -p .git/hooks", want: Deny},
		{name: "install", allow: all, deny: edit, cmd: "install -D -m 755 x .git/hooks/pre-commit", want: Deny},
		{name: "find -delete", allow: all, deny: edit, cmd: "find .git -name '*.lock' -delete", want: Deny},
		{name: "curl -o", allow: all, deny: edit, cmd: "curl -o .git/config http://x", want: Deny},
		{name: "tar create", allow: all, deny: edit, cmd: "tar czf .git/x.tgz src", want: Deny},
		{name: "tar extract", allow: all, deny: edit, cmd: "tar -xf x.tar -C .git", want: Deny},
		{name: "a writer's glob", allow: all, deny: edit, cmd: "rm .gi?/*", want: Deny},
		{name: "after cd", allow: all, deny: edit, cmd: "cd .git && echo x > config", want: Deny},
		{name: "after ; cd", allow: all, deny: edit, cmd: "cd .git; echo x > config", want: Deny},
		{name: "in a function", allow: all, deny: edit, cmd: "f() { echo x > .git/config; }; f", want: Deny},
		{name: "in a workdir", allow: all, deny: edit, workdir: ".git", cmd: "echo x > config", want: Deny},
		{name: "cwd tilde", allow: all, deny: edit, cmd: "echo x > ~+/.git/config", want: Deny},
		{name: "unknown tilde asks", allow: all, deny: edit, cmd: "echo x > ~-/config", want: Ask},
		{name: "other user's home asks", allow: all, deny: edit, cmd: "echo x > ~root/.bashrc", want: Ask},
		{name: "an unknown program naming the directory asks", allow: all, deny: edit, cmd: "python fix.py .git/config", want: Ask},
		{name: "a reader naming it runs", allow: all, deny: edit, cmd: "cat .git/config", want: Allow},
		{name: "edit ask", allow: all, ask: edit, cmd: "echo x > .git/config", want: Ask, rule: "Edit(./.git/**)"},
		// The workspace's bounds.
		{name: "inside", allow: []string{"Bash(cp:*)"}, cmd: "cp a src/b", want: Allow},
		{name: "outside", allow: []string{"Bash(cp:*)"}, cmd: "cp a /etc/b", want: Ask},
		{name: "outside allowed by an Edit rule", allow: []string{"Bash(cp:*)", "Edit(//etc/**)"}, cmd: "cp a /etc/b", want: Allow},
		{name: "outside through a link", allow: []string{"Bash(touch:*)"}, cmd: "touch escape/x", want: Ask},
		{name: "outside after cd", allow: []string{"Bash(touch:*)", "Bash(cd:*)"}, cmd: "cd /etc && touch x", want: Ask},
		{name: "a link may point outside", allow: []string{"Bash(ln:*)"}, cmd: "ln -s /usr/bin/python3 py", want: Allow},
		{name: "a glob inside", allow: []string{"Bash(rm:*)"}, cmd: "rm -f src/*.o", want: Allow},
		{name: "a glob may climb", allow: []string{"Bash(rm:*)"}, cmd: "rm -f src/.*/x", want: Ask},
		{name: "a dynamic target", allow: []string{"Bash(touch:*)"}, cmd: `touch "$f"`, want: Ask},
		{name: "devices", allow: []string{"Bash(make:*)"}, cmd: "make > /dev/null 2>/dev/stderr </dev/stdin", want: Allow},
		{name: "process substitution target", allow: []string{"Bash(make:*)", "Bash(tee:*)"}, cmd: "make > >(tee build.log)", want: Allow},
		{name: "bypass allows outside", mode: ModeBypass, cmd: "cp a /etc/b", want: Allow},
		{name: "bypass keeps edit deny", mode: ModeBypass, deny: edit, cmd: "cp a .git/b", want: Deny},
		{name: "bypass keeps read deny", mode: ModeBypass, deny: read, cmd: "base64 secrets/key", want: Deny},
		{name: "accept-edits does not allow bash", mode: ModeAcceptEdits, cmd: "touch src/x", want: Ask},
		{name: "plan denies bash", mode: ModePlan, allow: all, cmd: "ls", want: Deny},
	})
}

// TestBashModes decides one allowed, one unallowed and one denied line
// in every mode.
func TestBashModes(t *testing.T) {
	ws := t.TempDir()
	allow := []string{"Bash(ls:*)"}
	deny := []string{"Bash(rm:*)"}
	var cases []bashCase
	for _, m := range []struct {
		mode                     Mode
		allowed, unknown, denied Outcome
	}{
		{ModeDefault, Allow, Ask, Deny},
		{ModeAcceptEdits, Allow, Ask, Deny},
		{ModePlan, Deny, Deny, Deny},
		{ModeBypass, Allow, Allow, Deny},
	} {
		cases = append(cases,
			bashCase{name: string(m.mode) + " allowed", mode: m.mode, allow: allow, deny: deny, cmd: "ls -la", want: m.allowed},
			bashCase{name: string(m.mode) + " unknown", mode: m.mode, allow: allow, deny: deny, cmd: "ls; touch x", want: m.unknown},
			bashCase{name: string(m.mode) + " denied", mode: m.mode, allow: allow, deny: deny, cmd: "ls; $(echo rm) x", want: m.denied},
			bashCase{name: string(m.mode) + " unparsed", mode: m.mode, allow: allow, deny: deny, cmd: "ls 'x", want: Deny},
		)
	}
	runBashCases(t, ws, t.TempDir(), cases)
}

// TestBashSuggest checks the rule offered for an asked command.
func TestBashSuggest(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{})
	require.NoError(t, err)
	for cmd, want := range map[string]string{
		"npm run build --prod": "Bash(npm run build:*)",
		"pytest -x":            "Bash(pytest:*)",
		"go test ./...":        "Bash(go test:*)",
		"ls && rm x":           "",
		"$X y":                 "",
		"X=1 make":             "",
		"eval x":               "",
		"echo $(date)":         "",
	} {
		d := p.Decide(call(ws, "bash", map[string]any{"command": cmd}))
		require.Equal(t, Ask, d.Outcome, cmd)
		assert.Equal(t, want, d.Suggest, cmd)
	}
}
