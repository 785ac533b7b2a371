package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCapText(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"0123456789abc", 10, "0123456789\n[The answer was cut at 10 of 13 bytes; the whole answer is in session s1.]"},
		{"ééé", 3, "é\n[The answer was cut at 2 of 6 bytes; the whole answer is in session s1.]"},
	} {
		assert.Equal(t, c.want, capText(c.in, c.max, "s1"), "%q cut at %d", c.in, c.max)
	}
}

// FuzzCapText: the cut text is valid UTF-8 when the input is, keeps a
// prefix of at most max bytes, and says where the rest is.
func FuzzCapText(f *testing.F) {
	f.Add("hello world", 5)
	f.Add("日本語のテキスト", 4)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<20 {
			return
		}
		got := capText(s, max, "id")
		if len(s) <= max {
			require.Equal(t, s, got)
			return
		}
		head, _, ok := strings.Cut(got, "\n[The answer was cut at ")
		require.True(t, ok, got)
		require.LessOrEqual(t, len(head), max)
		require.True(t, strings.HasPrefix(s, head))
		if utf8.ValidString(s) {
			require.True(t, utf8.ValidString(head))
		}
		require.Contains(t, got, "session id.]")
	})
}
