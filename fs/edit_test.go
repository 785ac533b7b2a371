package fs_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
)

func apply(t *testing.T, content string, e fs.Edit) (string, []fs.Span, error) {
	t.Helper()
	out, spans, err := fs.ApplyEdit([]byte(content), e)
	return string(out), spans, err
}

func TestApplyEdit(t *testing.T) {
	cases := []struct {
		name    string
		content string
		edit    fs.Edit
		want    string
		err     error
	}{
		{"unique", "a foo b", fs.Edit{Old: "foo", New: "bar"}, "a bar b", nil},
		{"delete", "a foo b", fs.Edit{Old: " foo", New: ""}, "a b", nil},
		{"not found", "a foo b", fs.Edit{Old: "baz", New: "x"}, "", harness.CodeEditNotFound},
		{"case sensitive", "a Foo b", fs.Edit{Old: "foo", New: "x"}, "", harness.CodeEditNotFound},
		{"ambiguous", "foo foo", fs.Edit{Old: "foo", New: "x"}, "", harness.CodeAmbiguousEdit},
		{"replace all", "foo foo", fs.Edit{Old: "foo", New: "x", ReplaceAll: true}, "x x", nil},
		{"replace all non-overlapping", "aaaa", fs.Edit{Old: "aa", New: "b", ReplaceAll: true}, "bb", nil},
		{"literal dollar", "price", fs.Edit{Old: "price", New: "$1 ${x}"}, "$1 ${x}", nil},
		{"empty old", "abc", fs.Edit{Old: "", New: "x"}, "", harness.CodeInvalidEdit},
		{"old equals new", "abc", fs.Edit{Old: "b", New: "b"}, "", harness.CodeInvalidEdit},
		{"equal after line ending normalization", "a\nb", fs.Edit{Old: "a\r\nb", New: "a\nb"}, "", harness.CodeInvalidEdit},
		{"binary", "a\x00foo", fs.Edit{Old: "foo", New: "x"}, "", harness.CodeNotText},
		{"invalid utf8", "foo\n\xfe\n", fs.Edit{Old: "foo", New: "x"}, "", harness.CodeNotText},
		{"crlf file, lf old", "one\r\ntwo\r\nthree\r\n", fs.Edit{Old: "one\ntwo", New: "1\n2\n2b"}, "1\r\n2\r\n2b\r\nthree\r\n", nil},
		{"crlf file, crlf old", "one\r\ntwo\r\n", fs.Edit{Old: "one\r\ntwo", New: "x"}, "x\r\n", nil},
		{"crlf file, insertion without newline in old", "a\r\nb\r\n", fs.Edit{Old: "b", New: "b\nc"}, "a\r\nb\r\nc\r\n", nil},
		{"mixed file keeps local style", "a\nb\r\nc\n", fs.Edit{Old: "a\nb", New: "A\nB"}, "A\nB\r\nc\n", nil},
		{"untouched crlf lines stay", "x\r\ny\nz\r\n", fs.Edit{Old: "y", New: "Y"}, "x\r\nY\nz\r\n", nil},
		{"bom kept", fs.BOM + "foo\n", fs.Edit{Old: "foo", New: "bar"}, fs.BOM + "bar\n", nil},
		{"bom not matchable", fs.BOM + "foo\n", fs.Edit{Old: fs.BOM + "foo", New: "bar"}, "", harness.CodeEditNotFound},
		{"match at start after bom", fs.BOM + "foo\n", fs.Edit{Old: "foo\n", New: ""}, fs.BOM, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, spans, err := apply(t, c.content, c.edit)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			require.NotEmpty(t, spans)
			for _, s := range spans {
				assert.Equal(t, strings.ReplaceAll(c.content[s.OldStart:s.OldEnd], "\r\n", "\n"), strings.ReplaceAll(c.edit.Old, "\r\n", "\n"))
				assert.Equal(t, strings.ReplaceAll(got[s.NewStart:s.NewEnd], "\r\n", "\n"), strings.ReplaceAll(c.edit.New, "\r\n", "\n"))
			}
		})
	}
}

func TestApplyEditErrorDetails(t *testing.T) {
	_, _, err := apply(t, "x\nfoo\ny\nfoo\nfoo\n", fs.Edit{Old: "foo", New: "bar"})
	var fe *fs.PathError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, harness.CodeAmbiguousEdit, harness.CodeOf(err))
	assert.Equal(t, 3, fe.Count)
	assert.Equal(t, []int{2, 4, 5}, fe.Lines)

	// Whitespace-only differences are pointed at, never applied.
	_, _, err = apply(t, "a\nfunc f() {\n\treturn  1\n}\n", fs.Edit{Old: "func f() {\n    return 1\n}", New: "x"})
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, harness.CodeEditNotFound, harness.CodeOf(err))
	assert.Equal(t, []int{2}, fe.Lines)
	assert.Contains(t, fe.Detail, "whitespace is ignored at line 2")

	_, _, err = apply(t, "a\nfunc f() {\n\treturn 2\n}\n", fs.Edit{Old: "func f() {\n\treturn 1\n}", New: "x"})
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, []int{2}, fe.Lines)
	assert.Contains(t, fe.Detail, "first line occurs at line 2")

	_, _, err = apply(t, "ok\n\xc3(\n", fs.Edit{Old: "ok", New: "x"})
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, harness.CodeNotText, harness.CodeOf(err))
	assert.Equal(t, []int{2}, fe.Lines)
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func FuzzApplyEdit(f *testing.F) {
	f.Add("a foo b foo", "foo", "bar", false)
	f.Add("a foo b foo", "foo", "bar", true)
	f.Add("x\ny\nz\n", "y\n", "", false)
	f.Add("aaaa", "aa", "a", true)
	f.Add(fs.BOM+"q\r\nw", "q\nw", "e", false)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		out, spans, err := fs.ApplyEdit([]byte(content), fs.Edit{Old: old, New: new, ReplaceAll: all})
		if err == nil {
			for _, s := range spans {
				require.True(t, 0 <= s.OldStart && s.OldStart <= s.OldEnd && s.OldEnd <= len(content))
				require.True(t, 0 <= s.NewStart && s.NewStart <= s.NewEnd && s.NewEnd <= len(out))
			}
		}
		plain := !strings.ContainsAny(content+old+new, "\r\x00") && utf8.ValidString(content) &&
			!strings.HasPrefix(content, fs.BOM) && old != "" && old != new
		if !plain {
			return
		}
		n := strings.Count(content, old)
		switch {
		case n == 0:
			require.ErrorIs(t, err, harness.CodeEditNotFound)
			return
		case n > 1 && !all:
			require.ErrorIs(t, err, harness.CodeAmbiguousEdit)
			var fe *fs.PathError
			require.True(t, errors.As(err, &fe))
			require.Equal(t, n, fe.Count)
			return
		}
		require.NoError(t, err)
		want := strings.Replace(content, old, new, -1)
		require.Equal(t, want, string(out))
		require.Len(t, spans, n)
		for _, s := range spans {
			require.Equal(t, old, content[s.OldStart:s.OldEnd])
			require.Equal(t, new, string(out[s.NewStart:s.NewEnd]))
		}
		// The same edit of the CR LF form of the file gives the CR LF form
		// of the result.
		if strings.Contains(content, "\n") {
			out, _, err := fs.ApplyEdit([]byte(crlf(content)), fs.Edit{Old: old, New: new, ReplaceAll: all})
			require.NoError(t, err)
			require.Equal(t, crlf(want), string(out))
		}
	})
}
