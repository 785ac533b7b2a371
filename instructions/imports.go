package instructions

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/go-harness/harness"
)

// place names a file: a path in the session file system's namespace, or
// an OS path of a user-level file.
type place struct {
	user bool
	path string
}

func (p place) String() string { return p.path }

// source reads the files the expander includes. read returns
// harness.CodeNotFound for a file that does not exist, which leaves an
// @mention as text.
type source interface {
	read(ctx context.Context, p place) ([]byte, error)
	// resolve turns an import's target, as written in the file at from,
	// into the place it names, or explains why it may not be imported.
	resolve(from place, target string) (place, error)
}

// expander inlines @imports, each file at most once.
type expander struct {
	src      source
	maxDepth int
	// seen are the files included so far, in this set of context files.
	seen map[place]bool
	// bytes counts what was read, imports included.
	bytes int64
}

// errRefused is the error of an import that is not followed.
type refusal struct{ why string }

func (r *refusal) Error() string { return r.why }

func refused(format string, args ...any) error { return &refusal{why: fmt.Sprintf(format, args...)} }

// expand returns text with the files its @imports name inserted after
// the lines that name them, recursively: chain is the files being
// expanded, the outermost first, and depth the number of imports that
// led to text.
func (x *expander) expand(ctx context.Context, at place, text string, chain []place) string {
	imports := scanImports(text)
	if len(imports) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, im := range imports {
		b.WriteString(text[last:im.lineEnd])
		last = im.lineEnd
		var inserts []string
		for _, target := range im.targets {
			if s, ok := x.include(ctx, at, target, chain); ok {
				inserts = append(inserts, s)
			}
		}
		for _, s := range inserts {
			if !strings.HasSuffix(b.String(), "\n") {
				b.WriteString("\n")
			}
			b.WriteString(s)
		}
	}
	b.WriteString(text[last:])
	return b.String()
}

// include returns what an import of target from the file at from
// inserts: the file, framed, or a notice saying why not. ok is false
// for an @mention that names no file: the text stays as it is.
func (x *expander) include(ctx context.Context, from place, target string, chain []place) (string, bool) {
	to, err := x.src.resolve(from, target)
	if err != nil {
		return notice("@%s was not imported: %v.", target, err), true
	}
	for i, c := range chain {
		if c == to {
			var names []string
			for _, p := range chain[i:] {
				names = append(names, p.path)
			}
			names = append(names, to.path)
			return notice("@%s was not imported: it would include %s again, a cycle (%s).", target, to.path, strings.Join(names, " → ")), true
		}
	}
	if x.seen[to] {
		return notice("@%s: %s is included above.", target, to.path), true
	}
	if len(chain) > x.maxDepth {
		return notice("@%s was not imported: imports nest at most %d deep, and this one is deeper (%s).", target, x.maxDepth, chainText(chain, to)), true
	}
	data, err := x.src.read(ctx, to)
	if errors.Is(err, harness.CodeNotFound) {
		return "", false
	}
	if err != nil {
		return notice("@%s was not imported: %v.", target, err), true
	}
	x.seen[to] = true
	x.bytes += int64(len(data))
	body := x.expand(ctx, to, validText(data), append(chain[:len(chain):len(chain)], to))
	var b strings.Builder
	fmt.Fprintf(&b, "[Imported from %s:]\n", to.path)
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "[End of %s.]\n", to.path)
	return b.String(), true
}

func chainText(chain []place, to place) string {
	var names []string
	for _, p := range chain {
		names = append(names, p.path)
	}
	return strings.Join(append(names, to.path), " → ")
}

func notice(format string, args ...any) string { return "[" + fmt.Sprintf(format, args...) + "]\n" }

// validText returns data as text, invalid UTF-8 replaced.
func validText(data []byte) string {
	if utf8.Valid(data) {
		return string(data)
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// anImport is a line holding @imports: where the line ends (after its
// newline) and the paths it names, in order.
type anImport struct {
	lineEnd int
	targets []string
}

// scanImports finds the @path mentions of a Markdown text, line by
// line: an @ at the start of a line or after a space, followed by a
// path (a word holding a slash or a dot, or starting with ~/), outside
// fenced code blocks and inline code spans. Trailing punctuation
// (.,;:!?) and closing brackets are not part of the path. A line may
// name several.
func scanImports(text string) []anImport {
	var out []anImport
	fence := ""
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start + 1
		}
		line := text[start:end]
		start = end
		trimmed := strings.TrimLeft(line, " \t")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence[:1]) && len(f) >= len(fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		if targets := lineImports(line); len(targets) > 0 {
			out = append(out, anImport{lineEnd: end, targets: targets})
		}
	}
	return out
}

// fenceOf returns the fence a line opens or closes (``` or ~~~, or
// longer), or "".
func fenceOf(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// lineImports returns the import targets of one line outside code
// spans.
func lineImports(line string) []string {
	var out []string
	inCode := 0 // the length of the backtick run that opened a code span
	for i := 0; i < len(line); {
		c := line[i]
		if c == '`' {
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			switch {
			case inCode == 0:
				inCode = n
			case inCode == n:
				inCode = 0
			}
			i += n
			continue
		}
		if inCode != 0 || c != '@' || (i > 0 && line[i-1] != ' ' && line[i-1] != '\t') {
			i++
			continue
		}
		j := i + 1
		for j < len(line) && !isSpace(line[j]) && line[j] != '`' {
			j++
		}
		tok := strings.TrimRight(line[i+1:j], ".,;:!?)]}>\"'")
		if looksLikePath(tok) {
			out = append(out, tok)
		}
		i = j
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// looksLikePath tells a path from an @mention of a person or a team.
func looksLikePath(tok string) bool {
	if tok == "" || strings.ContainsAny(tok, "@<>|*?\x00") {
		return false
	}
	return strings.HasPrefix(tok, "~/") || strings.Contains(tok, "/") || strings.Contains(path.Base(tok), ".")
}
