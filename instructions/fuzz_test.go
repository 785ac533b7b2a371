package instructions

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-harness/harness/fs/fstest"
)

// FuzzExpand feeds arbitrary text to the import expander, with files
// that import each other in the workspace: the original text survives
// line for line and in order (imports are only inserted), every file is
// inserted at most once, and the result is valid UTF-8.
func FuzzExpand(f *testing.F) {
	for _, seed := range []string{
		"plain text",
		"see @b.md and @c/d.md\n",
		"```\n@b.md\n```\n@b.md",
		"`@b.md` @b.md. @~/x.md @/ws/b.md @../up.md",
		"a@b.md @@b.md @b.md@ @ b.md\r\n@b.md\t@c/d.md",
		"~~~~\n@b.md\n~~~\n@b.md\n~~~~\n@b.md",
		"\xff\xfe @b.md \x00",
	} {
		f.Add(seed)
	}
	m := fstest.NewMemFS("/ws")
	for p, text := range map[string]string{
		"/ws/b.md":   "B @c/d.md @AGENTS.md",
		"/ws/c/d.md": "D @../b.md @e.md",
		"/ws/c/e.md": "E",
	} {
		if err := m.SetFile(p, []byte(text), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	l := New(Config{})
	f.Fuzz(func(t *testing.T, text string) {
		x := l.expander(m, "/ws")
		top := place{path: "/ws/AGENTS.md"}
		x.seen[top] = true
		in := validText([]byte(text))
		out := x.expand(context.Background(), top, in, []place{top})
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", text)
		}
		rest := out
		for line := range strings.SplitSeq(in, "\n") {
			i := strings.Index(rest, line)
			if i < 0 {
				t.Fatalf("the line %q of the input is missing from the output %q", line, out)
			}
			rest = rest[i+len(line):]
		}
		for _, p := range []string{"/ws/b.md", "/ws/c/d.md", "/ws/c/e.md"} {
			if n := strings.Count(out, "[Imported from "+p+":]"); n > 1 {
				t.Fatalf("%s was inserted %d times into %q", p, n, out)
			}
		}
	})
}
