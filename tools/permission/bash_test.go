package permission

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// viewOf is the view of a line started in /ws with home /home/u.
func viewOf(line string) *bashView {
	return parseBash(line, shellEnv{dir: "/ws", ws: "/ws", home: "/home/u"})
}

// cmds renders the view's commands: static words as they are, others
// as <raw>; a command run by a wrapper is prefixed with ">".
func cmds(v *bashView) []string {
	var out []string
	for _, c := range v.cmds {
		var ws []string
		for _, w := range c.words {
			if w.static {
				ws = append(ws, w.text)
			} else {
				ws = append(ws, "<"+w.raw+">")
			}
		}
		s := strings.Join(ws, " ")
		if c.parent != nil {
			s = "> " + s
		}
		out = append(out, s)
	}
	return out
}

// TestViewConstructs checks the commands the walk finds in every
// construct bash has.
func TestViewConstructs(t *testing.T) {
	cases := []struct {
		name, line string
		want       []string
	}{
		{"list", "a && b || c ; d | e & f |& g", []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"newlines", "a\nb\n\nc", []string{"a", "b", "c"}},
		{"continuation", "a \\\n b", []string{"a b"}},
		{"command substitution", "echo $(rm -rf /)", []string{"rm -rf /", "echo <$(rm -rf /)>"}},
		{"in double quotes", `echo "x $(id) y"`, []string{"id", `echo <"x $(id) y">`}},
		{"backticks", "echo `id`", []string{"id", "echo <`id`>"}},
		{"nested backticks", "echo `echo \\`id\\``", []string{"id", "echo <`id\\`>", "echo <`echo \\`id\\``>"}},
		{"nested substitutions", "echo $(echo $(id))", []string{"id", "echo <$(id)>", "echo <$(echo $(id))>"}},
		{"quotes", `echo 'a;b' "c&&d" e\;f`, []string{"echo a;b c&&d e;f"}},
		{"process substitution", "diff <(ls a) >(tee b)", []string{"ls a", "tee b", "diff <<(ls a)> <>(tee b)>"}},
		{"subshell and group", "(a; b) && { c; }", []string{"a", "b", "c"}},
		{"if", "if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"while", "while a; do b; done", []string{"a", "b"}},
		{"until", "until a; do b; done", []string{"a", "b"}},
		{"for", "for x in $(a); do b $x; done", []string{"a", "b <$x>"}},
		{"c-style for", "for ((i=0; i<$(a); i++)); do b; done", []string{"a", "b"}},
		{"select", "select x in a; do b; done", []string{"b"}},
		{"case", "case $(a) in $(b)) c;; *) d;; esac", []string{"a", "b", "c", "d"}},
		{"function", "f() { a; }; f", []string{"a", "f"}},
		{"function keyword", "function f { a; }", []string{"a"}},
		{"coproc", "coproc a", []string{"a"}},
		{"named coproc", "coproc n { a; }", []string{"a"}},
		{"time", "time -p a", []string{"a"}},
		{"negation", "! a", []string{"a"}},
		{"test clause", "[[ -f $(a) && $(b) == x ]]", []string{"a", "b"}},
		{"arithmetic", "(( $(a) + 1 ))", []string{"a"}},
		{"arithmetic expansion", "echo $(( $(a) ))", []string{"a", "echo <$(( $(a) ))>"}},
		{"parameter expansion", "echo ${x:-$(a)} ${x/$(b)/$(c)}", []string{"a", "b", "c", "echo <${x:-$(a)}> <${x/$(b)/$(c)}>"}},
		{"assignment", "X=$(a) b", []string{"a", "b"}},
		{"assignment alone", "X=$(a)", []string{"a", "<X=$(a)>"}},
		{"array", "X=(1 $(a))", []string{"a", "<X=(1 $(a))>"}},
		{"declare", "declare -x X=$(a)", []string{"a", "declare -x <X=$(a)>"}},
		{"let", "let x=1", []string{"let x=1"}},
		{"redirect target", "echo > $(a)", []string{"a", "echo"}},
		{"here-string", "cat <<< $(a)", []string{"a", "cat"}},
		{"heredoc", "cat <<EOF\n$(a)\nEOF\nb", []string{"a", "cat", "b"}},
		{"quoted heredoc", "cat <<'EOF'\n$(a)\nEOF\nb", []string{"cat", "b"}},
		{"dash heredoc", "cat <<-EOF\n\t$(a)\n\tEOF", []string{"a", "cat"}},
		{"heredoc delimiter with $", "cat <<$X\n$(a)\n$X\nb", []string{"a", "cat", "b"}},
		{"heredoc delimiter with ${}", "cat <<${X}\nhi\n${X}\nb", []string{"cat", "b"}},
		{"((...) ) is a subshell", "ls; ((a) )", []string{"ls", "a"}},
		{"$((...) ) is a substitution", "ls $((a) )", []string{"a", "ls <$( (a) )>"}},
		{"$' inside double quotes", `ls "$'"; touch PWN; echo "'"`, []string{"ls $'", "touch PWN", "echo '"}},
		{"quotes inside ${}", `ls ${X:-'}'}; touch PWN # '`, []string{"ls <${X:-'}'}>", "touch PWN"}},
		{"comment", "echo # rm -rf /", []string{"echo"}},
		{"not a comment", "echo a#b", []string{"echo a#b"}},
		{"ANSI-C", `$'\x72m' x`, []string{"rm x"}},
		{"eval", "eval 'a; b'", []string{"eval a; b", "a", "b"}},
		{"eval joins", `eval a\; b`, []string{"eval a; b", "a", "b"}},
		{"bash -c", "bash -c 'a | b' name arg", []string{"bash -c a | b name arg", "a", "b"}},
		{"sh -ec", "sh -ec 'a'", []string{"sh -ec a", "a"}},
		{"bash reading a heredoc", "bash <<EOF\na\nEOF", []string{"bash", "a"}},
		{"trap", "trap 'a' EXIT", []string{"trap a EXIT", "a"}},
		{"alias", "alias ll='a -l'", []string{"alias ll=a -l", "a -l"}},
		{"PS4", `PS4='$(a)' b`, []string{"a", "b"}},
		{"extglob at the start", "!(a)", []string{"<!(a)>", "a"}},
		{"timeout", "timeout -s KILL 5 a x", []string{"timeout -s KILL 5 a x", "> a x"}},
		{"nice", "nice -n 5 a", []string{"nice -n 5 a", "> a"}},
		{"nice -N", "nice -5 a", []string{"nice -5 a", "> a"}},
		{"env", "env -i -u X Y=1 a", []string{"env -i -u X Y=1 a", "> a"}},
		{"xargs", "xargs -0 -n 1 a", []string{"xargs -0 -n 1 a", "> a"}},
		{"xargs -I", "xargs -I{} a {}", []string{"xargs -I{} a {}", "> a <{}>"}},
		{"stdbuf", "stdbuf -o0 -eL a", []string{"stdbuf -o0 -eL a", "> a"}},
		{"command", "command -p a", []string{"command -p a", "> a"}},
		{"command -v runs nothing", "command -v a", []string{"command -v a"}},
		{"builtin", "builtin eval a", []string{"builtin eval a", "> eval a", "a"}},
		{"exec", "exec -a name a", []string{"exec -a name a", "> a"}},
		{"sudo", "sudo -u root -E a", []string{"sudo -u root -E a", "> a"}},
		{"doas", "doas -u root a", []string{"doas -u root a", "> a"}},
		{"wrappers in wrappers", "sudo timeout 5 nice a", []string{"sudo timeout 5 nice a", "> timeout 5 nice a", "> nice a", "> a"}},
		{"find -exec", `find . -name x -exec a {} \; -exec b {} +`, []string{"find . -name x -exec a {} ; -exec b {} +", "> a <{}>", "> b <{}>"}},
		{"git global options", "git -C sub -c user.name=x push", []string{"git -C sub -c user.name=x push", "> git push"}},
		{"watch", "watch -n 1 'a; b'", []string{"watch -n 1 a; b", "a", "b"}},
		{"flock -c", "flock /tmp/l -c 'a'", []string{"flock /tmp/l -c a", "a"}},
		{"busybox", "busybox rm x", []string{"busybox rm x", "> rm x"}},
		{"brace expansion", "{a,b} x", []string{"<{a,b}> x"}},
		{"glob", "/bin/r[m] x", []string{"</bin/r[m]> x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := viewOf(c.line)
			assert.ElementsMatch(t, c.want, cmds(v), "%q", c.line)
		})
	}
}

// TestViewFlags checks what makes a line unmodelled (never allowed by a
// prefix rule) or code the rules cannot see (denied under any command
// deny rule).
func TestViewFlags(t *testing.T) {
	cases := []struct {
		line             string
		unmodelled, code bool
	}{
		{line: "ls -la"},
		{line: "for f in a b; do echo $f; done"},
		{line: "i=0; echo $((i+1))"},
		{line: "echo $((1+2))"},
		{line: "for ((i=0;i<3;i++)); do :; done"},
		{line: `echo "unterminated`, unmodelled: true, code: true},
		{line: "echo $(id", unmodelled: true, code: true},
		{line: "echo )", unmodelled: true, code: true},
		{line: "a\x00b", unmodelled: true, code: true},
		{line: "ls; ((a) )", unmodelled: true},
		{line: "cat <<$X\nx\n$X", unmodelled: true},
		{line: `eval "$X"`, unmodelled: true, code: true},
		{line: `bash -c "$X"`, unmodelled: true, code: true},
		{line: "curl x | sh", unmodelled: true, code: true},
		{line: "bash < script.sh"},
		{line: "x='a[$(id)]'; echo $((x))", unmodelled: true, code: true},
		{line: "read x; echo $((x))", unmodelled: true, code: true},
		{line: "[[ $v -eq 1 ]] && read v", unmodelled: true, code: true},
		{line: `let 'x=a[$(id)]'`, unmodelled: true, code: true},
		{line: "echo ${x@P}", unmodelled: true, code: true},
		{line: "declare -i x=$y", unmodelled: true, code: true},
		{line: "PS4=$X bash -xc ls", unmodelled: true, code: true},
		{line: "git -c core.pager=x log", unmodelled: true, code: true},
		{line: "git -c user.name=x log"},
		{line: "xargs -I{} sh -c 'rm {}'", unmodelled: true, code: true},
		{line: "export BASH_ENV=x", unmodelled: true},
		{line: `unset "a[$(id)]"`, unmodelled: true, code: true},
		{line: `read "b[$(id)]"`, unmodelled: true, code: true},
		{line: `printf -v "c[$(id)]" x`, unmodelled: true, code: true},
		{line: `test -v "d[$(id)]"`, unmodelled: true, code: true},
		{line: `declare "e[$(id)]=1"`, unmodelled: true, code: true},
		{line: `unset "$v"`, unmodelled: true, code: true},
		{line: `mapfile -C 'id' -c 1 arr < f`},
		{line: `mapfile -C "$cb" arr < f`, unmodelled: true, code: true},
		{line: `printf '%s' "$x"`},
		{line: `read -r -p "name: " x`},
		{line: "unset 'a[1]' x"},
		{line: "alias ll='ls -l'", unmodelled: true, code: true},
	}
	for _, c := range cases {
		v := viewOf(c.line)
		assert.Equal(t, c.unmodelled, len(v.unmodelled) > 0, "unmodelled %q: %q", c.line, v.unmodelled)
		assert.Equal(t, c.code, v.anyCode != "", "code %q: %q", c.line, v.anyCode)
	}
}

// TestViewPersistentShell: in a persistent shell, the directory and the
// variables come from earlier calls.
func TestViewPersistentShell(t *testing.T) {
	v := parseBash("echo $((x)) > out", shellEnv{dir: "/ws", ws: "/ws", persistent: true})
	assert.NotEmpty(t, v.anyCode, "x may have been set to a subscript by an earlier call")
	require.Len(t, v.redirs, 1)
	assert.True(t, v.redirs[0].dir.unknown)
}

// TestViewDirectories checks where commands run after cd.
func TestViewDirectories(t *testing.T) {
	dirOf := func(line string, i int) dirSet { return viewOf(line).cmds[i].dir }
	assert.Equal(t, knownDir("/ws"), dirOf("ls", 0))
	assert.Equal(t, dirSet{dirs: []string{"/ws", "/ws/sub"}}, dirOf("cd sub && ls", 1), "cd may fail: both")
	assert.Equal(t, dirSet{dirs: []string{"/ws", "/etc"}}, dirOf("cd /etc; ls", 1))
	assert.Equal(t, knownDir("/ws"), dirOf("(cd sub); ls", 1), "a subshell's cd stays there")
	assert.Equal(t, knownDir("/ws"), dirOf("cd sub | ls", 1), "each side of a pipe is a subshell")
	assert.True(t, dirOf(`cd "$d"; ls`, 1).unknown)
	assert.True(t, dirOf("cd -; ls", 1).unknown)
	assert.True(t, dirOf("popd; ls", 1).unknown)
	assert.True(t, dirOf("CDPATH=/ ; cd etc; ls", 2).unknown)
	assert.True(t, dirOf("$X sub; ls", 1).unknown, "a command known only when it runs may be cd")
	assert.True(t, dirOf("source x; ls", 1).unknown)
	assert.Equal(t, dirSet{dirs: []string{"/ws", "/home/u/p"}}, dirOf("cd ~/p; ls", 1))
	assert.True(t, dirOf("HOME=/x; cd; ls", 2).unknown, "the line sets HOME")
	assert.Equal(t, dirSet{dirs: []string{"/ws", "/ws/.git"}}, dirOf("builtin cd .git; ls", 2))
	assert.Equal(t, dirSet{dirs: []string{"/ws", "/ws/.git"}}, dirOf("eval 'cd .git'; ls", 2))
	assert.Equal(t, knownDir("/ws"), dirOf("f() { ls; }", 0), "a function body runs where it is defined when nothing changes directory")
	assert.True(t, dirOf("f() { ls; }; cd x", 0).unknown)
	v := viewOf("cd .git > a; echo > b")
	require.Len(t, v.redirs, 2)
	assert.Equal(t, knownDir("/ws"), v.redirs[0].dir, "a redirection is opened before the command runs")
	assert.Equal(t, dirSet{dirs: []string{"/ws", "/ws/.git"}}, v.redirs[1].dir)
}

// TestViewRedirects checks the files redirected to or from.
func TestViewRedirects(t *testing.T) {
	v := viewOf("echo x 2> err >| clobber <> rw < in &> all &>> app >& both 2>&1 <&- 3>&2- {fd}>named")
	var got []string
	for _, r := range v.redirs {
		s := r.w.text
		if r.write {
			s = "w:" + s
		}
		got = append(got, s)
	}
	assert.Equal(t, []string{"w:err", "w:clobber", "w:rw", "in", "w:all", "w:app", "w:both", "w:named"}, got)
	v = viewOf("echo > ~+/x > ~-/y > ~root/z > ~/h")
	var tildes []tildeKind
	for _, r := range v.redirs {
		tildes = append(tildes, r.w.tilde)
	}
	assert.Equal(t, []tildeKind{tildeCwd, tildeUnknown, tildeUnknown, tildeHome}, tildes)
}

// TestDecodeANSIC checks $'...' decoding against bash itself where it
// is installed, and against known values.
func TestDecodeANSIC(t *testing.T) {
	cases := map[string]string{
		`rm`: "rm", `\x72m`: "rm", `\162m`: "rm", `\u0072m`: "rm", `\U00000072m`: "rm", `a\'b`: "a'b",
		`\n\t\\`: "\n\t\\", `r\0m`: "r", `\cA`: "\x01", `\e`: "\x1b", `\q`: `\q`, `\x`: `\x`, `\x7`: "\x07",
	}
	for in, want := range cases {
		got, ok := decodeANSIC(in)
		require.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Log("bash is not installed: decoding not compared with it")
		return
	}
	for in := range cases {
		out, err := exec.Command("bash", "-c", "printf %s $'"+in+"'").Output()
		require.NoError(t, err)
		got, _ := decodeANSIC(in)
		assert.Equal(t, string(out), got, "bash decodes $'%s' differently", in)
	}
}

// TestParseRewrites checks the texts the parser refuses and bash reads.
func TestParseRewrites(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ls $((a) )", "ls $( (a) )"},
		{"((a) && (b))", "( (a) && (b))"},
	} {
		_, got, note, err := parseFile(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got)
		assert.NotEmpty(t, note)
	}
	_, got, _, err := parseFile("cat <<$X\nbody\n$X\nls")
	require.NoError(t, err)
	assert.Equal(t, "cat <<HARNESS_HEREDOC_END\nbody\nHARNESS_HEREDOC_END\nls", got)
	_, got, _, err = parseFile("cat <<\"$X\"\n$(a)\n$X")
	require.NoError(t, err)
	assert.Equal(t, "cat <<'HARNESS_HEREDOC_END'\n$(a)\nHARNESS_HEREDOC_END", got, "a quoted delimiter keeps the body literal")
	_, _, _, err = parseFile("cat <<$X\nno end")
	assert.Error(t, err, "no line ends the body: no rewrite")
	_, _, _, err = parseFile("echo 'x")
	assert.Error(t, err)
}

// TestScanOpts checks the option reader wrappers use.
func TestScanOpts(t *testing.T) {
	spec := &optSpec{flags: "ab", args: "c", optArgs: "d", long: longs("long req:r opt:o")}
	words := func(s ...string) []wordv {
		out := []wordv{plainWord("prog")}
		for _, x := range s {
			out = append(out, plainWord(x))
		}
		return out
	}
	for _, c := range []struct {
		in      []string
		next    int
		names   string
		problem bool
	}{
		{in: []string{"-ab", "x"}, next: 2, names: "a b"},
		{in: []string{"-c", "v", "x"}, next: 3, names: "c"},
		{in: []string{"-cv", "x"}, next: 2, names: "c"},
		{in: []string{"-dv", "x"}, next: 2, names: "d"},
		{in: []string{"--long", "--req", "v", "--opt=1", "x"}, next: 5, names: "long req opt"},
		{in: []string{"--lo", "x"}, next: 2, names: "long"},
		{in: []string{"--", "-a"}, next: 2},
		{in: []string{"-z", "x"}, problem: true},
		{in: []string{"--nope", "x"}, problem: true},
		{in: []string{"-c"}, problem: true},
	} {
		i, hits, problem := scanOpts(words(c.in...), 1, spec)
		assert.Equal(t, c.problem, problem != "", "%q: %s", c.in, problem)
		if c.problem {
			continue
		}
		assert.Equal(t, c.next, i, "%q", c.in)
		var names []string
		for _, h := range hits {
			names = append(names, h.name)
		}
		assert.Equal(t, c.names, strings.Join(names, " "), "%q", c.in)
	}
}

// TestViewLoopWithCd: a loop whose body changes directory is walked
// until its start settles, and its commands are in the view once.
func TestViewLoopWithCd(t *testing.T) {
	v := viewOf("for d in a b; do cd $d; make > log; done")
	assert.Empty(t, v.anyCode)
	assert.Equal(t, []string{"cd <$d>", "make"}, cmds(v))
	require.Len(t, v.redirs, 1)
	assert.True(t, v.redirs[0].dir.unknown)
	v = viewOf("while read d; do cd sub; ls; done")
	assert.Equal(t, []string{"read d", "cd sub", "ls"}, cmds(v))
	assert.True(t, v.cmds[2].dir.unknown, "each round goes one deeper: the loop does not settle")
	v = viewOf("for f in a b; do cd /tmp; ls; done")
	assert.Equal(t, dirSet{dirs: []string{"/ws", "/tmp"}}, v.cmds[1].dir, "the second round starts where the first ended")
}
