package codesearch

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/go-harness/harness/internal/textmatch"
)

// pieces reads r in pieces of varying small sizes.
type pieces struct {
	data []byte
	n    int
}

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	p.n = p.n%7 + 1
	k := min(len(b), p.n, len(p.data))
	copy(b, p.data[:k])
	p.data = p.data[k:]
	return k, nil
}

// expected computes content output line by line, the plain way.
func expected(m *textmatch.Matcher, text string, before, after, keep int) (count int, out []shownLine) {
	if text == "" {
		return 0, nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	show := map[int]bool{}
	match := map[int]bool{}
	for i, l := range lines {
		if !m.MatchLine([]byte(l)) {
			continue
		}
		count++
		if count > keep {
			continue
		}
		match[i] = true
		for j := max(0, i-before); j <= min(len(lines)-1, i+after); j++ {
			show[j] = true
		}
	}
	for i, l := range lines {
		if show[i] {
			out = append(out, shownLine{n: i + 1, text: showLine([]byte(l)), match: match[i]})
		}
	}
	return count, out
}

// FuzzScanLines compares the streaming scan (tiny buffers, reads in
// pieces) with a line-by-line reference, in every output mode.
func FuzzScanLines(f *testing.F) {
	f.Add("a\nb\nmatch\nc\nd\nmatch\ne\n", "match", 1, 1, 10, 8)
	f.Add("x\r\nmatch\r\n\r\nmatch", "h$", 2, 0, 1, 4)
	f.Add("one\ntwo\nthree\nfour\nfive\nsix\nseven", "o|e", 0, 3, 2, 5)
	f.Add("\n\n\nm\n\n", "^$", 1, 1, 100, 1)
	f.Fuzz(func(t *testing.T, text, pattern string, before, after, keep, chunk int) {
		if strings.IndexByte(text, 0) >= 0 {
			return
		}
		before, after = abs(before)%4, abs(after)%4
		keep = abs(keep)%20 + 1
		chunk = abs(chunk)%64 + 1
		m, err := textmatch.Compile(pattern, textmatch.Options{})
		if err != nil {
			return
		}
		wantCount, wantLines := expected(m, text, before, after, keep)
		for _, mode := range []outputMode{modeContent, modeCount, modeFiles} {
			s := &scanner{m: m, mode: mode, before: before, after: after, keep: keep, chunk: chunk, maxLine: 1 << 20}
			res := &fileResult{}
			if err := s.scanLines(context.Background(), &pieces{data: []byte(text)}, res); err != nil {
				t.Fatal(err)
			}
			switch mode {
			case modeContent:
				if res.count != wantCount {
					t.Fatalf("content count %d, want %d", res.count, wantCount)
				}
				if len(res.lines) != len(wantLines) {
					t.Fatalf("lines %+v, want %+v", res.lines, wantLines)
				}
				for i := range wantLines {
					if res.lines[i] != wantLines[i] {
						t.Fatalf("line %d: %+v, want %+v", i, res.lines[i], wantLines[i])
					}
				}
			case modeCount:
				if res.count != wantCount {
					t.Fatalf("count %d, want %d", res.count, wantCount)
				}
			case modeFiles:
				if (res.count > 0) != (wantCount > 0) {
					t.Fatalf("files: matched %v, want %v", res.count > 0, wantCount > 0)
				}
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n {
			return 0
		}
		return -n
	}
	return n
}

// TestLongLine checks that a line longer than the largest buffer is
// matched in pieces, and the line numbers after it stay right.
func TestLongLine(t *testing.T) {
	m, err := textmatch.Compile("needle", textmatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := "first\n" + strings.Repeat("x", 100) + "needle" + strings.Repeat("y", 100) + "\nthird needle\n"
	s := &scanner{m: m, mode: modeContent, keep: 10, chunk: 16, maxLine: 64}
	res := &fileResult{}
	if err := s.scanLines(context.Background(), bytes.NewReader([]byte(text)), res); err != nil {
		t.Fatal(err)
	}
	if res.count < 2 || res.lines[len(res.lines)-1].n != 3 || res.lines[len(res.lines)-1].text != "third needle" {
		t.Fatalf("got %d matches, lines %+v", res.count, res.lines)
	}
}
