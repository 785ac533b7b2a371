package files_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/internal/fsimpl"
)

// FuzzEditTool runs the edit tool end to end (ledger, file system, diff
// render, reply snippet) on arbitrary text: it never panics, and a
// successful edit leaves what strings.Replace would.
func FuzzEditTool(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B\nB", false)
	f.Add("x x x", "x", "", true)
	f.Add("no newline", "line", "\n\n", false)
	f.Add("\n\n\n", "\n", "\n\n", true)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		if len(content) > 4096 || !utf8.ValidString(content+old+new) {
			return
		}
		r := newRig(t, fstest.NewMemFS("/w"), "/w")
		r.put("/w/f.txt", content)
		if res := r.call("read", map[string]any{"file_path": "f.txt"}); res.IsError {
			return // not text
		}
		res := r.call("edit", map[string]any{"file_path": "f.txt", "old_string": old, "new_string": new, "replace_all": all})
		plain := !strings.ContainsAny(content+old+new, "\r\x00") && !strings.HasPrefix(content, fsimpl.BOM) && old != "" && old != new
		if !plain {
			return
		}
		n := strings.Count(content, old)
		if n == 0 || (n > 1 && !all) {
			require.True(t, res.IsError)
			return
		}
		require.False(t, res.IsError, res.Text())
		require.Equal(t, strings.Replace(content, old, new, -1), r.content("/w/f.txt"))
		d := res.Render.Diff
		require.NotNil(t, d)
		require.Equal(t, harness.RenderDiff, res.Render.Kind)
	})
}
