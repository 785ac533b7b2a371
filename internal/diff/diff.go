package diff

import (
	"bytes"
	"strings"
)

// Op is the kind of an edit line.
type Op byte

// Edit operations, as unified diffs write them.
const (
	Equal  Op = ' '
	Delete Op = '-'
	Insert Op = '+'
)

// Edit is one line of an edit script. Text is the line with its
// terminator, if it had one. An Equal edit with Skip > 0 stands for Skip
// unchanged lines that were not materialized; its Text is empty.
type Edit struct {
	Op   Op
	Text string
	Skip int
}

// Hunk is one region of a unified diff. Lines start with ' ', '-' or '+'
// and carry no line terminator.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []string
}

// MaxCost bounds the edit distance Lines searches for in one subproblem.
// Past it the subproblem is reported as a plain delete-then-insert, which
// is correct but not minimal; this keeps the running time bounded on
// unrelated texts.
const MaxCost = 4096

// SplitLines splits s after each line feed. The last line has no
// terminator unless s ends with one; an empty s has no lines.
func SplitLines(s []byte) []string {
	if len(s) == 0 {
		return nil
	}
	out := make([]string, 0, bytes.Count(s, []byte{'\n'})+1)
	str := string(s)
	for len(str) > 0 {
		i := strings.IndexByte(str, '\n')
		if i < 0 {
			out = append(out, str)
			break
		}
		out = append(out, str[:i+1])
		str = str[i+1:]
	}
	return out
}

// Lines returns an edit script that turns a into b: every line of a
// appears once as Equal or Delete, every line of b once as Equal or
// Insert, in order. Within a changed region deletions come before
// insertions.
func Lines(a, b []string) []Edit {
	ids := map[string]int{}
	id := func(s string) int {
		if v, ok := ids[s]; ok {
			return v
		}
		ids[s] = len(ids)
		return len(ids) - 1
	}
	ai := make([]int, len(a))
	for i, s := range a {
		ai[i] = id(s)
	}
	bi := make([]int, len(b))
	for i, s := range b {
		bi[i] = id(s)
	}
	m := &myers{a: ai, b: bi, out: make([]Edit, 0, max(len(a), len(b)))}
	m.diff(0, len(a), 0, len(b))
	for i := range m.out {
		if m.out[i].Op == Insert {
			m.out[i].Text = b[m.out[i].Skip]
		} else {
			m.out[i].Text = a[m.out[i].Skip]
		}
		m.out[i].Skip = 0
	}
	return m.out
}

// myers computes the script on line ids. While it runs, Edit.Skip holds
// the index of the line in a (Equal, Delete) or b (Insert).
type myers struct {
	a, b []int
	out  []Edit
	v    []int
}

func (m *myers) diff(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && m.a[a0] == m.b[b0] {
		m.out = append(m.out, Edit{Op: Equal, Skip: a0})
		a0++
		b0++
	}
	var tail int
	for a1 > a0 && b1 > b0 && m.a[a1-1] == m.b[b1-1] {
		a1--
		b1--
		tail++
	}
	switch {
	case a0 == a1:
		m.inserts(b0, b1)
	case b0 == b1:
		m.deletes(a0, a1)
	default:
		x, y, ok := m.bisect(a0, a1, b0, b1)
		if ok && (x-a0)+(y-b0) > 0 && (a1-x)+(b1-y) > 0 {
			m.diff(a0, x, b0, y)
			m.diff(x, a1, y, b1)
		} else {
			m.deletes(a0, a1)
			m.inserts(b0, b1)
		}
	}
	for i := range tail {
		m.out = append(m.out, Edit{Op: Equal, Skip: a1 + i})
	}
}

func (m *myers) deletes(a0, a1 int) {
	for i := a0; i < a1; i++ {
		m.out = append(m.out, Edit{Op: Delete, Skip: i})
	}
}

func (m *myers) inserts(b0, b1 int) {
	for i := b0; i < b1; i++ {
		m.out = append(m.out, Edit{Op: Insert, Skip: i})
	}
}

// bisect finds a point (x, y) on an optimal path through the edit graph
// of a[a0:a1] and b[b0:b1], searching from both ends at once (Myers 1986,
// section 4b). It reports false when the cost exceeds MaxCost.
func (m *myers) bisect(a0, a1, b0, b1 int) (int, int, bool) {
	n, mm := a1-a0, b1-b0
	maxD := (n + mm + 1) / 2
	off := maxD + 1
	size := 2*maxD + 3
	if cap(m.v) < 2*size {
		m.v = make([]int, 2*size)
	}
	v1, v2 := m.v[:size], m.v[size:2*size]
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - mm
	front := delta%2 != 0
	var k1start, k1end, k2start, k2end int
	for d := 0; d < maxD && d <= MaxCost; d++ {
		for k1 := -d + k1start; k1 <= d-k1end; k1 += 2 {
			i := off + k1
			var x int
			if k1 == -d || (k1 != d && v1[i-1] < v1[i+1]) {
				x = v1[i+1]
			} else {
				x = v1[i-1] + 1
			}
			y := x - k1
			for x < n && y < mm && m.a[a0+x] == m.b[b0+y] {
				x++
				y++
			}
			v1[i] = x
			switch {
			case x > n:
				k1end += 2
			case y > mm:
				k1start += 2
			case front:
				j := off + delta - k1
				if j >= 0 && j < size && v2[j] != -1 && x >= n-v2[j] {
					return a0 + x, b0 + y, true
				}
			}
		}
		for k2 := -d + k2start; k2 <= d-k2end; k2 += 2 {
			i := off + k2
			var x int
			if k2 == -d || (k2 != d && v2[i-1] < v2[i+1]) {
				x = v2[i+1]
			} else {
				x = v2[i-1] + 1
			}
			y := x - k2
			for x < n && y < mm && m.a[a1-1-x] == m.b[b1-1-y] {
				x++
				y++
			}
			v2[i] = x
			switch {
			case x > n:
				k2end += 2
			case y > mm:
				k2start += 2
			case !front:
				j := off + delta - k2
				if j >= 0 && j < size && v1[j] != -1 {
					x1 := v1[j]
					y1 := x1 - (j - off)
					if x1 >= n-x {
						return a0 + x1, b0 + y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
}

// Hunks groups an edit script into unified-diff hunks with up to context
// unchanged lines around each change. Changes separated by at most
// 2*context unchanged lines share a hunk; an elided run (Edit.Skip)
// always separates hunks.
func Hunks(script []Edit, context int) []Hunk {
	context = max(context, 0)
	n := len(script)
	oldAt := make([]int, n+1) // 1-based line number of item i in the old text
	newAt := make([]int, n+1)
	oldAt[0], newAt[0] = 1, 1
	for i, e := range script {
		oldAt[i+1], newAt[i+1] = oldAt[i], newAt[i]
		switch {
		case e.Op == Equal && e.Skip > 0:
			oldAt[i+1] += e.Skip
			newAt[i+1] += e.Skip
		case e.Op == Equal:
			oldAt[i+1]++
			newAt[i+1]++
		case e.Op == Delete:
			oldAt[i+1]++
		default:
			newAt[i+1]++
		}
	}
	plainEqual := func(i int) bool { return script[i].Op == Equal && script[i].Skip == 0 }
	var hunks []Hunk
	for i := 0; i < n; {
		if script[i].Op == Equal {
			i++
			continue
		}
		s := i
		for k := 0; k < context && s > 0 && plainEqual(s-1); k++ {
			s--
		}
		e := i
		for {
			for e < n && script[e].Op != Equal {
				e++
			}
			r, skip := e, false
			for r < n && script[r].Op == Equal {
				skip = skip || script[r].Skip > 0
				r++
			}
			if r < n && !skip && r-e <= 2*context {
				e = r
				continue
			}
			for k := 0; k < context && e < n && plainEqual(e); k++ {
				e++
			}
			break
		}
		h := Hunk{OldStart: oldAt[s], NewStart: newAt[s], Lines: make([]string, 0, e-s)}
		for _, ed := range script[s:e] {
			h.Lines = append(h.Lines, string(ed.Op)+trimEOL(ed.Text))
			if ed.Op != Insert {
				h.OldLines++
			}
			if ed.Op != Delete {
				h.NewLines++
			}
		}
		if h.OldLines == 0 {
			h.OldStart--
		}
		if h.NewLines == 0 {
			h.NewStart--
		}
		hunks = append(hunks, h)
		i = e
	}
	return hunks
}

// Region is a changed byte range: a[OldStart:OldEnd] became
// b[NewStart:NewEnd].
type Region struct {
	OldStart, OldEnd int
	NewStart, NewEnd int
}

// RegionScript returns an edit script that turns a into b when b differs
// from a only in regions, which must be in order and must not overlap;
// bytes outside them are equal. Unchanged runs are elided (Edit.Skip)
// except for up to context lines next to a change, so the work is
// proportional to the changed text, not to the size of a and b: an edit
// of a large file costs little more than the edit itself.
func RegionScript(a, b []byte, regions []Region, context int) []Edit {
	context = max(context, 0)
	type span struct{ os, oe, ns, ne int }
	var spans []span
	for i := 0; i < len(regions); i++ {
		r := regions[i]
		ls := bytes.LastIndexByte(a[:r.OldStart], '\n') + 1
		cur := span{os: ls, ns: r.NewStart - (r.OldStart - ls), oe: r.OldEnd, ne: r.NewEnd}
		for {
			ext := 0
			if !lineBoundary(a, cur.oe) || !lineBoundary(b, cur.ne) {
				if k := bytes.IndexByte(a[cur.oe:], '\n'); k >= 0 {
					ext = k + 1
				} else {
					ext = len(a) - cur.oe
				}
			}
			if i+1 < len(regions) && regions[i+1].OldStart < cur.oe+ext {
				i++
				cur.oe, cur.ne = regions[i].OldEnd, regions[i].NewEnd
				continue
			}
			cur.oe += ext
			cur.ne += ext
			break
		}
		spans = append(spans, cur)
	}
	var out []Edit
	gap := func(g []byte, head, tail bool) {
		if len(g) == 0 {
			return
		}
		total := bytes.Count(g, []byte{'\n'})
		if g[len(g)-1] != '\n' {
			total++
		}
		h, t := 0, 0
		if head {
			h = min(context, total)
		}
		if tail {
			t = min(context, total-h)
		}
		rest := g
		for range h {
			k := bytes.IndexByte(rest, '\n')
			if k < 0 {
				k = len(rest) - 1
			}
			out = append(out, Edit{Op: Equal, Text: string(rest[:k+1])})
			rest = rest[k+1:]
		}
		tailLines := make([]string, t)
		end := len(rest)
		for k := t - 1; k >= 0; k-- {
			start := bytes.LastIndexByte(rest[:end-1], '\n') + 1
			tailLines[k] = string(rest[start:end])
			end = start
		}
		if skip := total - h - t; skip > 0 {
			out = append(out, Edit{Op: Equal, Skip: skip})
		}
		for _, l := range tailLines {
			out = append(out, Edit{Op: Equal, Text: l})
		}
	}
	po := 0
	for i, s := range spans {
		gap(a[po:s.os], i > 0, true)
		out = append(out, Lines(SplitLines(a[s.os:s.oe]), SplitLines(b[s.ns:s.ne]))...)
		po = s.oe
	}
	gap(a[po:], len(spans) > 0, false)
	return out
}

// lineBoundary reports whether e is at the start of a line of x or at
// its end.
func lineBoundary(x []byte, e int) bool {
	return e == 0 || e == len(x) || x[e-1] == '\n'
}

func trimEOL(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}
