package textcut

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Prefix returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 sequence.
func Prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := n
	// Back up over continuation bytes to the start of the rune at i.
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// Suffix returns the longest suffix of s of at most n bytes that does not
// start inside a UTF-8 sequence.
func Suffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := len(s) - n
	for i < len(s) && i < len(s)-n+utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// HeadLines returns a prefix of s of at most n bytes that ends after a
// newline when one falls in the second half of the budget, and otherwise
// ends at a rune boundary.
func HeadLines(s string, n int) string {
	p := Prefix(s, n)
	if len(p) == len(s) {
		return p
	}
	if i := strings.LastIndexByte(p, '\n'); i >= 0 && i+1 >= len(p)/2 {
		return p[:i+1]
	}
	return p
}

// TailLines returns a suffix of s of at most n bytes that starts after a
// newline when one falls in the first half of the budget, and otherwise
// starts at a rune boundary.
func TailLines(s string, n int) string {
	t := Suffix(s, n)
	if len(t) == len(s) {
		return t
	}
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/2 {
		return t[i+1:]
	}
	return t
}

// Tail is an io.Writer that keeps only the last Max bytes written, and
// counts them all. It is safe for concurrent use.
type Tail struct {
	max   int
	mu    sync.Mutex
	buf   []byte // ring of up to max bytes
	start int    // index of the oldest byte once full
	total int64
}

// NewTail returns a Tail keeping the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps the end of p. It never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.total += int64(n)
	if t.max <= 0 {
		return n, nil
	}
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.start = 0
		return n, nil
	}
	if len(t.buf) < t.max {
		room := t.max - len(t.buf)
		if len(p) <= room {
			t.buf = append(t.buf, p...)
			return n, nil
		}
		t.buf = append(t.buf, p[:room]...)
		p = p[room:]
	}
	for len(p) > 0 {
		c := copy(t.buf[t.start:], p)
		p = p[c:]
		t.start = (t.start + c) % t.max
	}
	return n, nil
}

// Bytes returns a copy of the kept bytes, oldest first.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]byte, 0, len(t.buf))
	out = append(out, t.buf[t.start:]...)
	return append(out, t.buf[:t.start]...)
}

// String returns the kept text, starting at a rune boundary when bytes
// were dropped.
func (t *Tail) String() string {
	b := t.Bytes()
	if t.Dropped() > 0 {
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return string(b)
}

// Total returns how many bytes were written in all.
func (t *Tail) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Dropped returns how many written bytes are no longer kept.
func (t *Tail) Dropped() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total - int64(len(t.buf))
}
