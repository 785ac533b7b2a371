package web

import (
	"context"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden Markdown files")

// TestGolden converts saved real pages (testdata/golden, each with its
// source and licence named) and compares the Markdown with the golden
// files.
func TestGolden(t *testing.T) {
	cases := []struct {
		dir, base string
		title     string
		main      bool
		want      []string
	}{
		{"wikipedia-mozilla", "https://en.wikipedia.org/wiki/Mozilla", "Mozilla", true,
			[]string{"**Mozilla** is a [free-software]", "## History"}},
		{"v8-blog-standalone-wasm", "https://v8.dev/blog/emscripten-standalone-wasm", "standalone WebAssembly binaries using Emscripten", true,
			[]string{"```", "Emscripten"}},
		{"ietf-draft-remotestorage", "https://datatracker.ietf.org/doc/html/draft-dejong-remotestorage-04", "remoteStorage", true,
			[]string{"remoteStorage", "IETF Trust"}},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "golden", c.dir, "source.html"))
			require.NoError(t, err)
			base, err := url.Parse(c.base)
			require.NoError(t, err)
			d := decode(src, "text/html", formHTML, false)
			p, err := toMarkdown(context.Background(), d.text, base)
			require.NoError(t, err)
			got := "Title: " + p.title + "\n\n" + p.markdown + "\n"
			path := filepath.Join("testdata", "golden", c.dir, "expected.md")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
			assert.Equal(t, c.main, p.main)
			assert.Contains(t, p.title, c.title)
			for _, w := range c.want {
				assert.Contains(t, p.markdown, w)
			}
			assert.NotContains(t, p.markdown, "<script")
			assert.NotContains(t, p.markdown, "data:image")
			assert.Zero(t, p.pruned)
			assert.True(t, strings.ToValidUTF8(got, "") == got)
		})
	}
}
