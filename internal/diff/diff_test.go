package diff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sides rebuilds both texts from a script.
func sides(script []Edit) (a, b []string) {
	for _, e := range script {
		switch e.Op {
		case Equal:
			a, b = append(a, e.Text), append(b, e.Text)
		case Delete:
			a = append(a, e.Text)
		case Insert:
			b = append(b, e.Text)
		}
	}
	return a, b
}

func cost(script []Edit) int {
	n := 0
	for _, e := range script {
		if e.Op != Equal {
			n++
		}
	}
	return n
}

// lcs is the textbook dynamic program, for checking minimality.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// patch applies hunks to a's lines (terminators trimmed) and returns the
// result, or an error when a hunk does not fit.
func patch(a []string, hunks []Hunk) ([]string, error) {
	var out []string
	at := 0 // next line of a, 0-based
	for _, h := range hunks {
		start := h.OldStart - 1
		if h.OldLines == 0 {
			start = h.OldStart
		}
		if start < at || start > len(a) {
			return nil, fmt.Errorf("hunk at %d out of order (at %d)", h.OldStart, at)
		}
		for ; at < start; at++ {
			out = append(out, trimEOL(a[at]))
		}
		for _, l := range h.Lines {
			switch l[0] {
			case ' ', '-':
				if at >= len(a) || trimEOL(a[at]) != l[1:] {
					return nil, fmt.Errorf("context mismatch at old line %d: %q", at+1, l)
				}
				if l[0] == ' ' {
					out = append(out, l[1:])
				}
				at++
			case '+':
				out = append(out, l[1:])
			}
		}
	}
	for ; at < len(a); at++ {
		out = append(out, trimEOL(a[at]))
	}
	return out, nil
}

func trimAll(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = trimEOL(l)
	}
	return out
}

func checkLines(t *testing.T, a, b []string) []Edit {
	t.Helper()
	script := Lines(a, b)
	ga, gb := sides(script)
	require.Equal(t, strings.Join(a, ""), strings.Join(ga, ""), "script reproduces a")
	require.Equal(t, strings.Join(b, ""), strings.Join(gb, ""), "script reproduces b")
	if len(a)+len(b) < 200 {
		assert.Equal(t, len(a)+len(b)-2*lcs(a, b), cost(script), "script is minimal")
	}
	for _, ctx := range []int{0, 1, 3} {
		got, err := patch(a, Hunks(script, ctx))
		require.NoError(t, err)
		require.Equal(t, trimAll(b), nilIfEmpty(got), "hunks with context %d patch a into b", ctx)
	}
	return script
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return []string{}
	}
	return s
}

func lines(s string) []string { return SplitLines([]byte(s)) }

func TestLinesTable(t *testing.T) {
	cases := []struct{ name, a, b string }{
		{"both empty", "", ""},
		{"create", "", "a\nb\n"},
		{"delete all", "a\nb\n", ""},
		{"same", "a\nb\nc\n", "a\nb\nc\n"},
		{"change middle", "a\nb\nc\n", "a\nB\nc\n"},
		{"insert top", "b\nc\n", "a\nb\nc\n"},
		{"append", "a\n", "a\nb\n"},
		{"no final newline", "a\nb", "a\nb\n"},
		{"swap", "a\nb\n", "b\na\n"},
		{"classic", "a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n"},
		{"repeated", strings.Repeat("x\n", 50), strings.Repeat("x\n", 47) + "y\n" + strings.Repeat("x\n", 3)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkLines(t, lines(c.a), lines(c.b))
		})
	}
}

func TestHunksFormat(t *testing.T) {
	a := lines("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n")
	b := lines("1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n11\n12\nthirteen\n")
	h := Hunks(Lines(a, b), 2)
	require.Len(t, h, 2)
	assert.Equal(t, Hunk{OldStart: 2, OldLines: 5, NewStart: 2, NewLines: 5,
		Lines: []string{" 2", " 3", "-4", "+four", " 5", " 6"}}, h[0])
	assert.Equal(t, Hunk{OldStart: 11, OldLines: 2, NewStart: 11, NewLines: 3,
		Lines: []string{" 11", " 12", "+thirteen"}}, h[1])

	// Close changes share a hunk.
	h = Hunks(Lines(lines("a\nb\nc\nd\n"), lines("A\nb\nc\nD\n")), 1)
	require.Len(t, h, 1)
	assert.Equal(t, []string{"-a", "+A", " b", " c", "-d", "+D"}, h[0].Lines)

	// A created file: the old range is empty and starts at 0.
	h = Hunks(Lines(nil, lines("x\ny\n")), 3)
	require.Len(t, h, 1)
	assert.Equal(t, Hunk{OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 2, Lines: []string{"+x", "+y"}}, h[0])
}

func TestLinesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		a := randomLines(r, r.IntN(40))
		b := mutate(r, a)
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkLines(t, a, b) })
	}
}

func randomLines(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a'+r.IntN(4))) + "\n"
	}
	return out
}

func mutate(r *rand.Rand, a []string) []string {
	b := append([]string(nil), a...)
	for range r.IntN(6) {
		switch i := r.IntN(len(b) + 1); r.IntN(3) {
		case 0:
			b = append(b[:i], append([]string{string(rune('a'+r.IntN(5))) + "\n"}, b[i:]...)...)
		case 1:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		default:
			if i < len(b) {
				b[i] = "z\n"
			}
		}
	}
	return b
}

func TestCostBound(t *testing.T) {
	// Two unrelated large texts exceed MaxCost: the script is still
	// correct (delete then insert), and it comes back quickly.
	a := make([]string, 20000)
	b := make([]string, 20000)
	for i := range a {
		a[i] = fmt.Sprintf("a%d\n", i)
		b[i] = fmt.Sprintf("b%d\n", i)
	}
	script := Lines(a, b)
	ga, gb := sides(script)
	assert.Equal(t, a, ga)
	assert.Equal(t, b, gb)
	assert.Equal(t, 40000, cost(script))
}

// applyRegions builds b from a by replacing regions with the given texts.
func applyRegions(a []byte, spans [][2]int, repl []string) ([]byte, []Region) {
	var b []byte
	var regs []Region
	prev := 0
	for i, s := range spans {
		b = append(b, a[prev:s[0]]...)
		ns := len(b)
		b = append(b, repl[i]...)
		regs = append(regs, Region{OldStart: s[0], OldEnd: s[1], NewStart: ns, NewEnd: len(b)})
		prev = s[1]
	}
	return append(b, a[prev:]...), regs
}

func checkRegions(t *testing.T, a []byte, spans [][2]int, repl []string) {
	t.Helper()
	b, regs := applyRegions(a, spans, repl)
	for _, ctx := range []int{0, 2, 3} {
		script := RegionScript(a, b, regs, ctx)
		got, err := patch(SplitLines(a), Hunks(script, ctx))
		require.NoError(t, err, "a=%q b=%q", a, b)
		require.Equal(t, trimAll(SplitLines(b)), nilIfEmpty(got), "a=%q b=%q ctx=%d", a, b, ctx)
		var oldN, newN int
		for _, e := range script {
			switch {
			case e.Skip > 0:
				oldN += e.Skip
				newN += e.Skip
			case e.Op == Equal:
				oldN++
				newN++
			case e.Op == Delete:
				oldN++
			default:
				newN++
			}
		}
		assert.Equal(t, len(SplitLines(a)), oldN, "script covers every old line")
		assert.Equal(t, len(SplitLines(b)), newN, "script covers every new line")
	}
}

func TestRegionScript(t *testing.T) {
	a := []byte("l1\nl2\nl3 foo bar\nl4\nl5\nl6\nl7\nl8\nl9 foo\nl10\nl11\nl12")
	foo := strings.Index(string(a), "foo")
	bar := strings.Index(string(a), "bar")
	foo2 := strings.LastIndex(string(a), "foo")
	checkRegions(t, a, [][2]int{{foo, foo + 3}}, []string{"FOO"})
	checkRegions(t, a, [][2]int{{foo, foo + 3}, {bar, bar + 3}}, []string{"x\ny", "BAR"})
	checkRegions(t, a, [][2]int{{foo, foo + 3}, {foo2, foo2 + 3}}, []string{"", "baz\n"})
	checkRegions(t, a, [][2]int{{0, 3}}, []string{""})
	checkRegions(t, a, [][2]int{{len(a) - 3, len(a)}}, []string{"end\n"})
	checkRegions(t, a, [][2]int{{3, 6}, {6, 9}}, []string{"A\n", "B\n"})

	// An edit in a large text elides the untouched lines.
	big := []byte(strings.Repeat("line\n", 100000) + "target\n" + strings.Repeat("line\n", 100000))
	i := strings.Index(string(big), "target")
	b, regs := applyRegions(big, [][2]int{{i, i + 6}}, []string{"changed"})
	script := RegionScript(big, b, regs, 3)
	assert.Less(t, len(script), 20)
	h := Hunks(script, 3)
	require.Len(t, h, 1)
	assert.Equal(t, Hunk{OldStart: 99998, OldLines: 7, NewStart: 99998, NewLines: 7,
		Lines: []string{" line", " line", " line", "-target", "+changed", " line", " line", " line"}}, h[0])
}

func TestRegionScriptRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		a := []byte(strings.Join(randomLines(r, r.IntN(30)), ""))
		if r.IntN(3) == 0 && len(a) > 0 {
			a = a[:len(a)-1]
		}
		checkRegions(t, a, randomSpans(r, len(a)), randomRepl(r, 4))
	}
}

func randomSpans(r *rand.Rand, n int) [][2]int {
	var out [][2]int
	at := 0
	for at < n && len(out) < 4 {
		s := at + r.IntN(n-at+1)
		if s >= n {
			break
		}
		e := s + 1 + r.IntN(min(4, n-s))
		out = append(out, [2]int{s, e})
		at = e
	}
	return out
}

func randomRepl(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for range r.IntN(5) {
			sb.WriteByte("ab\nz"[r.IntN(4)])
		}
		out[i] = sb.String()
	}
	return out
}

func FuzzLines(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x")
	f.Add("x\ny", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a)+len(b) > 4000 {
			return
		}
		checkLines(t, lines(a), lines(b))
	})
}

func FuzzRegionScript(f *testing.F) {
	f.Add("l1\nl2 foo\nl3\n", uint64(7), "X\nY")
	f.Add("abc", uint64(1), "")
	f.Fuzz(func(t *testing.T, a string, seed uint64, repl string) {
		if len(a) > 2000 || len(repl) > 200 {
			return
		}
		r := rand.New(rand.NewPCG(seed, seed>>7))
		spans := randomSpans(r, len(a))
		reps := make([]string, len(spans))
		for i := range reps {
			reps[i] = repl[:r.IntN(len(repl)+1)]
		}
		checkRegions(t, []byte(a), spans, reps)
	})
}
