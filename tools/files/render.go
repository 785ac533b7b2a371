package files

import (
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/diff"
	"github.com/go-harness/harness/internal/fsimpl"
)

// contextLines is the number of unchanged lines around each hunk.
const contextLines = 3

// diffRender builds the diff render of a change from old to new (old nil
// for a created file) from an edit script.
func (c config) diffRender(title, p string, old, new []byte, created bool, script []diff.Edit) *harness.Render {
	d := &harness.Diff{Path: p}
	for _, e := range script {
		switch {
		case e.Op == diff.Delete:
			d.Removed++
		case e.Op == diff.Insert:
			d.Added++
		}
	}
	lines := 0
	for _, h := range diff.Hunks(script, contextLines) {
		if lines+len(h.Lines) > c.diffLines {
			d.Truncated = true
			break
		}
		lines += len(h.Lines)
		d.Hunks = append(d.Hunks, harness.Hunk{OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Lines: h.Lines})
	}
	if len(old)+len(new) <= c.diffText {
		if !created {
			s := string(old)
			d.OldText = &s
		}
		d.NewText = string(new)
	} else {
		d.Truncated = true
	}
	return &harness.Render{Kind: harness.RenderDiff, Title: title, Diff: d}
}

// titlePath is how a render title names a file: relative to the file
// system's root (the workspace) when inside it, the whole path outside
// it (spill files, or a file system rooted at "/").
func titlePath(fsys fs.FileSystem, p string) string {
	root := fsimpl.RootOf(fsys)
	if root == "/" || root == "" {
		return p
	}
	if p == root {
		return "."
	}
	if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(root, "/")+"/"); ok && rest != "" {
		return rest
	}
	return p
}
