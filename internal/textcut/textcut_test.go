package textcut

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestPrefixSuffix(t *testing.T) {
	s := "aé€😀z" // 1+2+3+4+1 bytes
	for n := 0; n <= len(s)+1; n++ {
		p, q := Prefix(s, n), Suffix(s, n)
		assert.LessOrEqual(t, len(p), n)
		assert.LessOrEqual(t, len(q), n)
		assert.True(t, utf8.ValidString(p), "prefix %d %q", n, p)
		assert.True(t, utf8.ValidString(q), "suffix %d %q", n, q)
		assert.True(t, strings.HasPrefix(s, p))
		assert.True(t, strings.HasSuffix(s, q))
	}
	assert.Equal(t, "aé", Prefix(s, 4))
	assert.Equal(t, "😀z", Suffix(s, 6))
}

func TestLines(t *testing.T) {
	s := "line one\nline two\nline three\n"
	assert.Equal(t, "line one\nline two\n", HeadLines(s, 20))
	assert.Equal(t, "line three\n", TailLines(s, 14))
	assert.Equal(t, "line", HeadLines("line one", 4), "no newline: cut at the budget")
	assert.Equal(t, s, HeadLines(s, 100))
}

func TestTail(t *testing.T) {
	tl := NewTail(10)
	var all bytes.Buffer
	for _, chunk := range []string{"abc", "defgh", "ijklmnop", "q", "rstuvwxyz0123456789", "!"} {
		tl.Write([]byte(chunk))
		all.WriteString(chunk)
		want := all.Bytes()
		if len(want) > 10 {
			want = want[len(want)-10:]
		}
		assert.Equal(t, string(want), string(tl.Bytes()))
	}
	assert.Equal(t, int64(all.Len()), tl.Total())
	assert.Equal(t, int64(all.Len()-10), tl.Dropped())

	u := NewTail(5)
	u.Write([]byte("xx€€")) // 2 + 3 + 3 bytes: the kept 5 start mid-rune
	assert.Equal(t, "€", u.String())
}

func FuzzCuts(f *testing.F) {
	for _, s := range []string{"", "abc", "a\nb\nc", "é€😀", "\xff\xfe", "line\r\nline\r\n"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		for _, got := range []string{Prefix(s, n), HeadLines(s, n)} {
			if len(got) > n || !strings.HasPrefix(s, got) {
				t.Fatalf("head %q of %q at %d", got, s, n)
			}
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Fatalf("head split a rune: %q", got)
			}
		}
		for _, got := range []string{Suffix(s, n), TailLines(s, n)} {
			if len(got) > n || !strings.HasSuffix(s, got) {
				t.Fatalf("tail %q of %q at %d", got, s, n)
			}
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Fatalf("tail split a rune: %q", got)
			}
		}
		tl := NewTail(n % 64)
		tl.Write([]byte(s))
		want := s
		if len(want) > n%64 {
			want = want[len(want)-n%64:]
		}
		if string(tl.Bytes()) != want {
			t.Fatalf("tail buffer %q, want %q", tl.Bytes(), want)
		}
	})
}
