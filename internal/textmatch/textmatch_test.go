package textmatch

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reference returns the 0-based numbers of the lines of text that match,
// by running the plain regexp on each line.
func reference(t testing.TB, pattern string, o Options, text []byte) []int {
	src := pattern
	if o.Literal {
		src = regexp.QuoteMeta(pattern)
	}
	if o.IgnoreCase {
		src = "(?i)" + src
	}
	re, err := regexp.Compile("(?m)" + src)
	require.NoError(t, err)
	var out []int
	if len(text) == 0 {
		return nil
	}
	text = bytes.TrimSuffix(text, []byte("\n"))
	for i, line := range bytes.Split(text, []byte("\n")) {
		// A CR that ends a line is part of the line break for '$'.
		if re.Match(line) || bytes.HasSuffix(line, []byte("\r")) && strings.Contains(src, "$") && re.Match(line[:len(line)-1]) {
			out = append(out, i)
		}
	}
	return out
}

// lines returns the 0-based numbers of the lines NextLine reports.
func lines(m *Matcher, text []byte) []int {
	var out []int
	from := 0
	for {
		s, e, ok := m.NextLine(text, from)
		if !ok {
			return out
		}
		out = append(out, bytes.Count(text[:s], []byte("\n")))
		if e >= len(text) {
			return out
		}
		from = e + 1
	}
}

const sample = "package main\n\nimport \"io\"\n\nfunc NewReader(r io.Reader) *Reader {\n\treturn &Reader{r: r}\n}\n// connection RESET by peer\nConnection reset by peer: retry\n\u212Aelvin and \u017Fign\nKELVIN\n\nlast line without newline"

func TestNextLine(t *testing.T) {
	cases := []struct {
		pattern string
		o       Options
		want    []int
	}{
		{"Reader", Options{Literal: true}, []int{4, 5}},
		{"reader", Options{Literal: true, IgnoreCase: true}, []int{4, 5}},
		{"connection reset by peer", Options{IgnoreCase: true}, []int{7, 8}},
		{`func \w+Reader`, Options{}, []int{4}},
		{`^$`, Options{}, []int{1, 3, 11}},
		{`^\s*return`, Options{}, []int{5}},
		{`kelvin`, Options{IgnoreCase: true}, []int{9, 10}},
		{`sign`, Options{IgnoreCase: true}, []int{9}},
		{`io|peer`, Options{}, []int{2, 4, 7, 8}},
		{`newline$`, Options{}, []int{12}},
		{`[^a-z]`, Options{}, []int{0, 2, 4, 5, 6, 7, 8, 9, 10, 12}},
		{`a.c`, Options{}, nil},
		{`a.*`, Options{}, []int{0, 4, 5, 9, 12}},
		{"x*", Options{}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"(", Options{Literal: true}, []int{4}},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			m, err := Compile(c.pattern, c.o)
			require.NoError(t, err)
			got := lines(m, []byte(sample))
			assert.Equal(t, c.want, got)
			assert.Equal(t, reference(t, c.pattern, c.o, []byte(sample)), got, "the plain regexp line by line agrees")
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		pattern string
		o       Options
		want    string
	}{
		{"", Options{}, "empty"},
		{"a(b", Options{}, "missing closing )"},
		{`a\nb`, Options{}, "set multiline"},
		{"line\nbreak", Options{Literal: true}, "set multiline"},
	} {
		_, err := Compile(c.pattern, c.o)
		require.ErrorIs(t, err, ErrPattern, c.pattern)
		assert.Contains(t, err.Error(), c.want)
	}
	m, err := Compile(`a\nb`, Options{Multiline: true})
	require.NoError(t, err)
	assert.Equal(t, [][]int{{3, 6}}, m.FindAll([]byte("xx\na\nb"), -1))
	m, err = Compile(`a|\n`, Options{})
	require.NoError(t, err, "an alternative that can match keeps the pattern usable")
	assert.Equal(t, []int{1}, lines(m, []byte("x\na\n\n")))
	m, _ = Compile("^$", Options{})
	assert.Empty(t, lines(m, []byte("m\n")), "no empty line after the final newline")
	m, _ = Compile("a$", Options{})
	assert.Equal(t, []int{0}, lines(m, []byte("a\r\nb\r\n")), "$ matches before the CR of a CRLF line end")
	m, _ = Compile("^$", Options{})
	assert.Equal(t, []int{2}, lines(m, []byte("x\na\n\n")), "a final newline ends the last line")
}

func TestRequiredLiterals(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    []Literal
	}{
		{"hello", []Literal{{Text: "hello"}}},
		{`func \w+Reader`, []Literal{{Text: "Reader"}}},
		{"(?i)connection reset by peer", []Literal{{Text: "connection re", Fold: true}}},
		{"foo|barbaz", []Literal{{Text: "foo"}, {Text: "barbaz"}}},
		{"a|b", nil},
		{`\w+`, nil},
		{"(?i)ks", nil},
		{"x(abc)+y", []Literal{{Text: "abc"}}},
	} {
		re, err := syntax.Parse(c.pattern, syntax.Perl)
		require.NoError(t, err)
		assert.Equal(t, c.want, RequiredLiterals(re.Simplify()), c.pattern)
	}
}

func TestRequiredSets(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    [][]Literal
	}{
		{"hello", [][]Literal{{{Text: "hello"}}}},
		{`connection \w+ by peer`, [][]Literal{{{Text: "connection "}}, {{Text: " by peer"}}}},
		{"(?i)connection reset by peer", [][]Literal{{{Text: "connection re", Fold: true}}, {{Text: "et by peer", Fold: true}}}},
		{`(foo|barx)\d+(quux)`, [][]Literal{{{Text: "quux"}}, {{Text: "foo"}, {Text: "barx"}}}},
		{`a\d+b`, [][]Literal{{{Text: "a"}}, {{Text: "b"}}}},
		{"(?i)ks", nil},
		{`\w+`, nil},
	} {
		re, err := syntax.Parse(c.pattern, syntax.Perl)
		require.NoError(t, err)
		assert.Equal(t, c.want, RequiredSets(re.Simplify()), c.pattern)
	}
}

// A folded needle whose rare byte Tune found rare is found by scanning
// for that byte in both cases, block by block: at block boundaries, with
// either case absent, and at the first of several occurrences.
func TestFinderFoldRareScan(t *testing.T) {
	sample := []byte(strings.Repeat("aaaa eeee tttt\n", 200))
	for _, needle := range []string{"by peer", "Yb", "xq"} {
		f := NewFinder([]byte(needle), true)
		f.Tune(ByteCounts(sample))
		require.True(t, f.scanRare, needle)
		for _, at := range []int{0, 1, foldBlock - 3, foldBlock - 1, foldBlock, 2*foldBlock + 5} {
			for _, form := range []string{strings.ToLower(needle), strings.ToUpper(needle), needle} {
				h := []byte(strings.Repeat("a", at) + form + strings.Repeat("e", 50) + strings.ToUpper(needle))
				want := bytes.Index(bytes.ToLower(h), bytes.ToLower([]byte(needle)))
				assert.Equal(t, want, f.Index(h), "needle %q as %q at %d", needle, form, at)
			}
		}
		assert.Equal(t, -1, f.Index(bytes.Repeat([]byte("y by pee"), 3000)), needle)
	}
}

func TestLowerASCII(t *testing.T) {
	var src []byte
	for c := range 256 {
		src = append(src, byte(c))
	}
	src = append(src, "Hello, WORLD: Ünïcödé KELVIN"...)
	dst := make([]byte, len(src))
	lowerASCII(dst, src)
	for i, c := range src {
		assert.Equal(t, lower(c), dst[i], "byte %d (%#x)", i, c)
	}
	long := []byte(strings.Repeat("x", 5000) + "NEEDLE" + strings.Repeat("y", 70) + "LongNeedle" + strings.Repeat("Z", 64))
	assert.Equal(t, 5000, NewFinder([]byte("needle"), true).Index(long))
	assert.Equal(t, 5076, NewFinder([]byte("longneedle"), true).Index(long))
	assert.Equal(t, 5076, NewFinder([]byte("longneedle"+strings.Repeat("z", 64)), true).Index(long), "a needle longer than the block overlap")
	edge := []byte(strings.Repeat("a", foldBlock-3) + "NEEDLE")
	assert.Equal(t, foldBlock-3, NewFinder([]byte("needle"), true).Index(edge), "across a block boundary")
}

func TestFinder(t *testing.T) {
	h := []byte(strings.Repeat("abcdefgh ", 100) + "NeedLE" + strings.Repeat(" x", 50))
	assert.Equal(t, 900, NewFinder([]byte("needle"), true).Index(h))
	assert.Equal(t, -1, NewFinder([]byte("needle"), false).Index(h))
	assert.Equal(t, 900, NewFinder([]byte("NeedLE"), false).Index(h))
	assert.Equal(t, -1, NewFinder([]byte("needlex"), true).Index(h))
	assert.Equal(t, 0, NewFinder([]byte("ABC"), true).Index(h))
	assert.Equal(t, -1, NewFinder([]byte("zz"), true).Index([]byte("z")))
}

// A tuned finder finds what bytes.Index finds, whichever byte the sample
// makes rare, exactly and folded.
func TestFinderTuned(t *testing.T) {
	h := []byte(strings.Repeat("aaaaaaaaaaZ", 1000) + "needleZ" + strings.Repeat("xZ", 100))
	counts := ByteCounts(h[:4000])
	for _, needle := range []string{"needleZ", "Z", "aZ", "eZx", "absent", "aaaaaaaaaaZaaaaaaaaaaZ"} {
		for _, fold := range []bool{false, true} {
			f := NewFinder([]byte(needle), fold)
			f.Tune(counts)
			want := bytes.Index(h, []byte(needle))
			if fold {
				want = bytes.Index(bytes.ToLower(h), bytes.ToLower([]byte(needle)))
			}
			assert.Equal(t, want, f.Index(h), "needle %q fold %v", needle, fold)
		}
	}
	f := NewFinder([]byte("long needle"), false)
	f.Tune(counts)
	assert.Equal(t, -1, f.Index([]byte("long")))
	assert.Equal(t, 0, f.Index([]byte("long needle")))
	f = NewFinder([]byte("needlez"), true)
	f.Tune(counts) // 'z' is rare in the sample, 'Z' is not: both count
	assert.NotEqual(t, byte('z'), f.rare)
	assert.Equal(t, 11*1000, f.Index(h))
}

// FuzzNextLine compares the matcher with the plain regexp run line by
// line, for any pattern, text and options.
func FuzzNextLine(f *testing.F) {
	f.Add("Reader", sample, false, false)
	f.Add("connection reset", sample, true, false)
	f.Add(`(?i)k\w+`, sample, false, false)
	f.Add(`^\s*$|x[^y]z`, "a\n \nxqz\nx\nz", false, false)
	f.Add("a.b", "a\nb\naxb", false, true)
	f.Add("NewReader", strings.Repeat("x newreadeR\n", 8)+"NEWREADER", true, true)
	f.Add(`func \w+reader\(`, strings.Repeat("fUNC newReader(\n", 5), true, false)
	f.Fuzz(func(t *testing.T, pattern, text string, fold, literal bool) {
		o := Options{Literal: literal, IgnoreCase: fold}
		m, err := Compile(pattern, o)
		if err != nil {
			return
		}
		src := pattern
		if literal {
			src = regexp.QuoteMeta(pattern)
		}
		if _, err := regexp.Compile(src); err != nil {
			t.Fatalf("Compile accepted %q, which regexp refuses", pattern)
		}
		want := reference(t, pattern, o, []byte(text))
		got := lines(m, []byte(text))
		if len(want) != len(got) || (len(want) > 0 && !equal(want, got)) {
			t.Fatalf("pattern %q fold %v literal %v: got lines %v, want %v", pattern, fold, literal, got, want)
		}
	})
}

func equal(a, b []int) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The pair scan (32 positions at a time where the system can) finds
// what bytes.Index finds: needles of any length in texts over a small
// alphabet, so that each of its bytes is common, near the ends of the
// text and across its blocks, tuned or not.
func TestFinderPairScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		h := make([]byte, rng.IntN(400))
		for i := range h {
			h[i] = "abcx"[rng.IntN(4)]
		}
		n := 1 + rng.IntN(12)
		var needle []byte
		if len(h) > n && rng.IntN(2) == 0 {
			i := rng.IntN(len(h) - n)
			needle = bytes.Clone(h[i : i+n])
		} else {
			for range n {
				needle = append(needle, "abcxy"[rng.IntN(5)])
			}
		}
		f := NewFinder(needle, false)
		if rng.IntN(2) == 0 {
			f.Tune(ByteCounts(h))
		}
		require.Equal(t, bytes.Index(h, needle), f.Index(h), "needle %q in %q", needle, h)
	}
}

// The folded pair scan (two rare bytes, each in either case, 32
// positions at a time) finds what bytes.Index finds in the lowered text:
// needles over letters in both cases and a few other bytes (including
// the ones that differ from letters by 0x20 alone, like '@' and '`'),
// at the ends of the text and across blocks, tuned or not.
func TestFinderFoldPairScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const alphabet = "aAbBxX@`[{_ "
	for range 5000 {
		h := make([]byte, rng.IntN(300))
		for i := range h {
			h[i] = alphabet[rng.IntN(len(alphabet))]
		}
		n := 2 + rng.IntN(10)
		var needle []byte
		if len(h) > n && rng.IntN(2) == 0 {
			i := rng.IntN(len(h) - n)
			needle = bytes.Clone(h[i : i+n])
		} else {
			for range n {
				needle = append(needle, alphabet[rng.IntN(len(alphabet))])
			}
		}
		f := NewFinder(needle, true)
		if rng.IntN(2) == 0 {
			f.Tune(ByteCounts(h))
		}
		want := bytes.Index(bytes.ToLower(h), bytes.ToLower(needle))
		require.Equal(t, want, f.Index(h), "needle %q in %q", needle, h)
	}
}

// FuzzFinder compares a finder, exact and folded, tuned on the text or
// not, with bytes.Index (on the lowered text and needle when folded).
func FuzzFinder(f *testing.F) {
	f.Add("NewReader", "func NewREADER(r io.Reader) *Reader", true, false)
	f.Add("ab", strings.Repeat("xA", 40)+"Ab", true, true)
	f.Add("@`", strings.Repeat("`@", 40)+"@`", true, false)
	f.Add("needle", strings.Repeat("n", 70)+"NEEDLE", false, true)
	f.Fuzz(func(t *testing.T, needle, text string, fold, tune bool) {
		if !isASCII(needle) && fold {
			return // folded literals are ASCII (RequiredLiterals)
		}
		fd := NewFinder([]byte(needle), fold)
		if tune {
			fd.Tune(ByteCounts([]byte(text)))
		}
		want := strings.Index(text, needle)
		if fold {
			want = bytes.Index(lowerAll([]byte(text)), lowerAll([]byte(needle)))
		}
		if got := fd.Index([]byte(text)); got != want {
			t.Fatalf("needle %q fold %v tune %v: got %d, want %d", needle, fold, tune, got, want)
		}
	})
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// lowerAll lowers ASCII letters only, as the finder folds.
func lowerAll(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = lower(c)
	}
	return out
}
