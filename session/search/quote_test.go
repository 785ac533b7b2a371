package search

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// strEnd is the plain definition of where a JSON string body starting
// at b[0] ends: at the first quote after an even run of backslashes.
func strEnd(b []byte) int {
	for i, c := range b {
		if c == '"' && backslashesBefore(b, i)%2 == 0 {
			return i
		}
	}
	return -1
}

func checkStrEnd(t *testing.T, body []byte) {
	t.Helper()
	line := append([]byte{'"'}, body...)
	w := &walker{b: line}
	lo, hi, ok := w.str()
	want := strEnd(body)
	if want < 0 {
		if ok {
			t.Fatalf("%q: the walker ends the string at %d, it does not end", body, hi-1)
		}
		return
	}
	if !ok || lo != 1 || hi != want+1 {
		t.Fatalf("%q: the walker ends the string at %d (ok %v), want %d", body, hi-1, ok, want)
	}
}

// The walker finds the end of a string where the plain definition
// does, whatever the runs of backslashes before quotes, at any offset
// from the 32-byte blocks the vector scan reads.
func TestStringEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte(`\\\\""ab`)
	for range 20000 {
		n := rng.IntN(200)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(4) != 0 {
				b[i] = 'x'
			}
		}
		checkStrEnd(t, b)
	}
	for n := range 100 {
		for _, tail := range []string{`"`, `\"`, `\\"`, `\\\"`, `\\\\"`} {
			b := append(bytes.Repeat([]byte{'x'}, n), tail...)
			checkStrEnd(t, b)
			checkStrEnd(t, append(b, `x\"yy"`...))
		}
	}
}

func FuzzStringEnd(f *testing.F) {
	f.Add([]byte(`plain text" after`))
	f.Add([]byte(`0123456789012345678901234567890\"0123456789012345678901234567890\\"`))
	f.Add(bytes.Repeat([]byte(`ab\"`), 40))
	f.Fuzz(func(t *testing.T, body []byte) { checkStrEnd(t, body) })
}
