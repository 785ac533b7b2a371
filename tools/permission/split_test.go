package permission

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func words(ln line) [][]string {
	var out [][]string
	for _, c := range ln.commands {
		ws := make([]string, len(c.words))
		for i, w := range c.words {
			ws[i] = strings.ReplaceAll(w, dynamicMark, "$")
		}
		out = append(out, ws)
	}
	return out
}

func TestSplitHostile(t *testing.T) {
	cases := []struct {
		in      string
		want    [][]string
		complex bool
	}{
		{in: "a && b || c ; d | e & f |& g", want: [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}}},
		{in: "echo $(rm -rf /)", want: [][]string{{"echo", "$"}, {"rm", "-rf", "/"}}},
		{in: "echo \"x $(id) y\"", want: [][]string{{"echo", "x $ y"}, {"id"}}},
		{in: "echo `id`", want: [][]string{{"echo", "$"}, {"id"}}},
		{in: "echo `echo \\`id\\``", want: [][]string{{"echo", "$"}, {"echo", "$"}, {"id"}}},
		{in: "echo $(echo $(id))", want: [][]string{{"echo", "$"}, {"echo", "$"}, {"id"}}},
		{in: `echo 'a;b' "c&&d" e\;f`, want: [][]string{{"echo", "a;b", "c&&d", "e;f"}}},
		{in: "echo a > out 2>&1 < in >> log &> all", want: [][]string{{"echo", "a"}}},
		{in: "cat <<EOF\n$(id)\nEOF\nls", want: [][]string{{"cat"}, {"id"}, {"ls"}}},
		{in: "cat <<'EOF'\n$(id)\nEOF\nls", want: [][]string{{"cat"}, {"ls"}}},
		{in: "cat <<-EOF\n\t$(id)\n\tEOF", want: [][]string{{"cat"}, {"id"}}},
		{in: "FOO=1 BAR=$(id) cmd", want: [][]string{{"FOO=1", "BAR=$", "cmd"}, {"id"}}},
		{in: "a\nb\n\nc", want: [][]string{{"a"}, {"b"}, {"c"}}},
		{in: "a \\\n b", want: [][]string{{"a", "b"}}},
		{in: "(a; b) && { c; }", want: [][]string{{"a"}, {"b"}, {"c"}}},
		{in: "diff <(ls a) >(tee b)", want: [][]string{{"diff", "$", "$"}, {"ls", "a"}, {"tee", "b"}}},
		{in: "echo # rm -rf /", want: [][]string{{"echo"}}},
		{in: "echo a#b", want: [][]string{{"echo", "a#b"}}},
		{in: "cat <<< $(id)", want: [][]string{{"cat"}, {"id"}}},
		{in: "echo ${X:-$(id)}", want: [][]string{{"echo", "$$"}, {"id"}}},
		{in: "echo $((1+2))", want: [][]string{{"echo", "$"}}},
		{in: `echo "unterminated`, complex: true, want: [][]string{{"echo", "unterminated"}}},
		{in: "echo $(id", complex: true, want: [][]string{{"echo", "$"}, {"id"}}},
		{in: "f() { rm x; }", complex: true, want: [][]string{{"f"}, {"rm", "x"}}},
		{in: "cat <<EOF\nno end", complex: true, want: [][]string{{"cat"}}},
		{in: "echo >", complex: true, want: [][]string{{"echo"}}},
		{in: "echo )", complex: true, want: [][]string{{"echo"}}},
		{in: "echo $'a\\'b'; rm x", want: [][]string{{"echo", "a\\'b$"}, {"rm", "x"}}},
	}
	for _, c := range cases {
		ln := splitLine(c.in)
		assert.ElementsMatch(t, c.want, words(ln), "%q", c.in)
		assert.Equal(t, c.complex, ln.complex, "%q", c.in)
	}
	ln := splitLine("cd /tmp && echo x > y")
	assert.True(t, ln.cwdChanged)
	assert.Equal(t, []redirect{{write: true, target: "y"}}, ln.commands[1].redirects)
	ln = splitLine("echo x 2> err >| clobber <> rw < in")
	assert.Equal(t, []redirect{{write: true, target: "err"}, {write: true, target: "clobber"}, {write: true, target: "rw"}, {target: "in"}}, ln.commands[0].redirects)
	assert.True(t, splitLine(strings.Repeat("$(", 100)+"x"+strings.Repeat(")", 100)).complex, "deep nesting is refused")
}

// FuzzSplit checks that the splitter never panics and never loses a
// command: a line appended after any input is either found as a command
// or the input is reported as something the rules cannot check.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"ls", "a && b", "echo $(id)", "cat <<EOF\nx\nEOF", "echo 'x", "f() { x; }", "echo `a`", "x \\", "a > b 2>&1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ln := splitLine(s)
		_ = splitLine(s + "\n")
		ln = splitLine(s + "\nrm -rf /")
		if ln.complex {
			return
		}
		for _, c := range ln.commands {
			w := c.words
			// (A continuation or an operator before the line may join
			// "rm" to what came before: `x\` makes xrm, `>\` a target.)
			if n := len(w); n >= 2 && w[n-2] == "-rf" && w[n-1] == "/" {
				return
			}
		}
		t.Fatalf("the command after %q was lost: %q", s, words(ln))
	})
}
