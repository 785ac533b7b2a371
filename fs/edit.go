package fs

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-harness/harness"
)

// ApplyEdit applies e to content and returns the new content and the
// replaced spans. It is the edit semantics every FileSystem shares:
//
//   - Old must not be empty, and must differ from New after line endings
//     are normalized (harness.CodeInvalidEdit).
//   - content must be UTF-8 text without NUL bytes (harness.CodeNotText).
//   - Matching is literal and case-sensitive, after CR LF is read as LF on
//     both sides, so text copied from a read window matches a CR LF file.
//     A UTF-8 byte order mark at the start of content is kept and never
//     matched.
//   - Without ReplaceAll, Old must occur exactly once: zero occurrences fail
//     with harness.CodeEditNotFound (with near misses in PathError.Lines when
//     there are any), several with harness.CodeAmbiguousEdit (with
//     PathError.Count and the first lines in PathError.Lines). With ReplaceAll,
//     every non-overlapping occurrence, left to right, is replaced, as
//     strings.Replace does.
//   - A replacement takes the line endings of the text it replaces (CR LF
//     if that text had CR LF, LF if it had bare LF, otherwise the file's
//     dominant style); bytes outside the replaced spans are kept exactly.
func ApplyEdit(content []byte, e Edit) ([]byte, []Span, error) {
	if e.Old == "" {
		return nil, nil, NewError(harness.CodeInvalidEdit, &PathError{Op: "edit", Detail: "old text is empty"})
	}
	oldN := strings.ReplaceAll(e.Old, "\r\n", "\n")
	newN := strings.ReplaceAll(e.New, "\r\n", "\n")
	if oldN == newN {
		return nil, nil, NewError(harness.CodeInvalidEdit, &PathError{Op: "edit", Detail: "old and new text are the same"})
	}
	if err := checkText(content); err != nil {
		return nil, nil, err
	}
	start := 0
	if bytes.HasPrefix(content, []byte(bom)) {
		start = len(bom)
	}
	body := content[start:]
	norm, crs := normalize(body)
	matches := findAll(norm, []byte(oldN))
	switch {
	case len(matches) == 0:
		d := &PathError{Op: "edit", Detail: "the old text does not occur in the file"}
		d.Lines, d.Detail = nearMisses(norm, oldN, d.Detail)
		return nil, nil, NewError(harness.CodeEditNotFound, d)
	case len(matches) > 1 && !e.ReplaceAll:
		lines := make([]int, 0, 5)
		for _, m := range matches[:min(5, len(matches))] {
			lines = append(lines, 1+bytes.Count(norm[:m], nl))
		}
		return nil, nil, NewError(harness.CodeAmbiguousEdit, &PathError{Op: "edit", Count: len(matches), Lines: lines,
			Detail: fmt.Sprintf("the old text occurs %d times", len(matches))})
	}
	// The file's dominant style matters only for a replacement with a line
	// break in place of text without one; find it once, when needed.
	dominant := -1
	crlfDominant := func() bool {
		if dominant < 0 {
			dominant = 0
			if dominantCRLF(body) {
				dominant = 1
			}
		}
		return dominant == 1
	}
	newCRLF := strings.ReplaceAll(newN, "\n", "\r\n")
	out := make([]byte, 0, len(content)+len(matches)*(len(newCRLF)-len(oldN)))
	out = append(out, content[:start]...)
	spans := make([]Span, 0, len(matches))
	prev := 0 // in body
	for _, m := range matches {
		a, b := origPos(m, crs), origPos(m+len(oldN), crs)
		region := body[a:b]
		repl := newN
		switch {
		case bytes.Contains(region, []byte("\r\n")):
			repl = newCRLF
		case bytes.IndexByte(region, '\n') >= 0:
		case strings.IndexByte(newN, '\n') >= 0 && crlfDominant():
			repl = newCRLF
		}
		out = append(out, body[prev:a]...)
		ns := len(out)
		out = append(out, repl...)
		spans = append(spans, Span{OldStart: start + a, OldEnd: start + b, NewStart: ns, NewEnd: len(out)})
		prev = b
	}
	out = append(out, body[prev:]...)
	return out, spans, nil
}

// checkText refuses content that is not UTF-8 text.
func checkText(b []byte) error {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return NewError(harness.CodeNotText, &PathError{Op: "edit", Detail: fmt.Sprintf("NUL byte at byte offset %d: the file is binary", i)})
	}
	if !utf8.Valid(b) {
		bad := 0
		for bad < len(b) {
			r, n := utf8.DecodeRune(b[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		line := 1 + bytes.Count(b[:bad], nl)
		return NewError(harness.CodeNotText, &PathError{Op: "edit", Lines: []int{line}, Detail: fmt.Sprintf("line %d is not valid UTF-8", line)})
	}
	return nil
}

// normalize returns b with every CR LF read as LF (b itself when it has
// none), and the positions (in the normalized text) of the line feeds
// that had a carriage return.
func normalize(b []byte) ([]byte, []int) {
	if !bytes.Contains(b, []byte("\r\n")) {
		return b, nil
	}
	out := make([]byte, 0, len(b))
	var crs []int
	for len(b) > 0 {
		i := bytes.Index(b, []byte("\r\n"))
		if i < 0 {
			out = append(out, b...)
			break
		}
		out = append(out, b[:i]...)
		crs = append(crs, len(out))
		out = append(out, '\n')
		b = b[i+2:]
	}
	return out, crs
}

// origPos maps a position of the normalized text to the original one: a
// position just before a line feed that had a carriage return maps to
// just before the carriage return.
func origPos(k int, crs []int) int {
	return k + sort.SearchInts(crs, k)
}

// findAll returns the starts of the non-overlapping occurrences of sub in
// s, left to right.
func findAll(s, sub []byte) []int {
	var out []int
	for i := 0; i <= len(s); {
		j := bytes.Index(s[i:], sub)
		if j < 0 {
			break
		}
		out = append(out, i+j)
		i += j + len(sub)
	}
	return out
}

// dominantCRLF reports whether most line endings of b are CR LF.
func dominantCRLF(b []byte) bool {
	crlf := bytes.Count(b, []byte("\r\n"))
	return crlf > bytes.Count(b, nl)-crlf
}

// nearMisses looks for places where old almost occurs in text: the same
// lines with different whitespace, or else its first non-blank line. It
// returns their 1-based line numbers and a detail sentence.
func nearMisses(text []byte, old, detail string) ([]int, string) {
	if len(text) > 8<<20 {
		return nil, detail
	}
	fileLines := strings.Split(string(text), "\n")
	oldLines := strings.Split(strings.Trim(old, "\n"), "\n")
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	want := make([]string, len(oldLines))
	for i, l := range oldLines {
		want[i] = squash(l)
	}
	var loose []int
	for i := 0; i+len(want) <= len(fileLines) && len(loose) < 3; i++ {
		ok := true
		for j, w := range want {
			if squash(fileLines[i+j]) != w {
				ok = false
				break
			}
		}
		if ok {
			loose = append(loose, i+1)
		}
	}
	if len(loose) > 0 {
		return loose, fmt.Sprintf("%s; it matches if whitespace is ignored at line %s", detail, joinInts(loose))
	}
	first := ""
	for _, w := range want {
		if w != "" {
			first = w
			break
		}
	}
	if first == "" || len(oldLines) < 2 {
		return nil, detail
	}
	var starts []int
	for i, l := range fileLines {
		if squash(l) == first {
			starts = append(starts, i+1)
			if len(starts) == 3 {
				break
			}
		}
	}
	if len(starts) == 0 {
		return nil, detail
	}
	return starts, fmt.Sprintf("%s; its first line occurs at line %s but the lines after it differ", detail, joinInts(starts))
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
