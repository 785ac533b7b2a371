package agent

import (
	"context"
	"fmt"
	"io"

	"github.com/go-harness/harness/internal/spillwriter"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/tools"
)

// oversized is a tool result too large for one event of the session
// log, cut down to fit: the model sees, and the host is shown, the form
// that was logged.
type oversized struct {
	// tries are the forms to log, in order, until one fits. Each has the
	// result's text saved whole through the output store and replaced by
	// a head and tail preview that names the saved output (the preview
	// the spill policy shows); with no output store, or when saving
	// failed, the preview says the middle is lost. The first keeps the
	// render data, the second slims it, the last drops it with the file
	// records.
	tries []harness.ToolResult
	// stored is where the whole text was saved; saveErr why it was not.
	stored  tools.Stored
	saveErr error
}

// cutToFit cuts res, whose event the log refused as larger than its
// maxEvent bytes, down to forms that fit (see oversized). The text is
// saved through out, named by owner; ctx bounds the save.
func cutToFit(ctx context.Context, out tools.OutputStore, owner tools.Owner, res harness.ToolResult, maxEvent int) (*oversized, error) {
	limit := previewLimit(maxEvent)
	cut := &oversized{}
	r := res
	if text := res.Text(); len(text) > limit {
		// previewLimit is never below spillwriter.MinThreshold, so
		// NewWriter cannot refuse it.
		w, err := spillwriter.NewWriter(ctx, out, owner, limit)
		if err != nil {
			return nil, err
		}
		_, _ = io.WriteString(w, text) // a Writer fails writes only after Close
		cut.saveErr = w.Close()
		saved := w.Output()
		cut.stored = saved.Stored
		r.Content = withText(r.Content, saved.Text+fmt.Sprintf(
			"\n[This result is a preview: the whole result is more than the %d bytes the session log holds in one event.]", maxEvent))
	}
	cut.tries = append(cut.tries, r)
	r.Render = slimRender(r.Render, limit)
	cut.tries = append(cut.tries, r)
	r.Render, r.Files = nil, nil
	cut.tries = append(cut.tries, r)
	return cut, nil
}

// previewLimit is the size of the preview of a result too large for a
// log line of maxLine bytes: the spill policy's default, and small
// enough that JSON escapes (up to six bytes for one) cannot make it too
// large again.
func previewLimit(maxLine int) int {
	return max(spillwriter.MinThreshold, min(spillwriter.DefaultThreshold, maxLine/8))
}

// withText replaces the text of content by text, placed where the first
// text block was; images are kept.
func withText(content []harness.Block, text string) []harness.Block {
	out := make([]harness.Block, 0, len(content)+1)
	placed := false
	for _, c := range content {
		if c.Type == harness.BlockText || c.Type == "" {
			if !placed {
				out = append(out, harness.TextBlock(text))
				placed = true
			}
			continue
		}
		out = append(out, c)
	}
	if !placed {
		out = append([]harness.Block{harness.TextBlock(text)}, out...)
	}
	return out
}

// slimRender keeps what a host card needs of r, with its long texts cut
// to about limit bytes: the end of a terminal's output, a diff's counts
// without its texts and hunks.
func slimRender(r *harness.Render, limit int) *harness.Render {
	if r == nil {
		return nil
	}
	out := &harness.Render{Kind: r.Kind, Title: textcut.Prefix(r.Title, limit), Text: textcut.HeadLines(r.Text, limit)}
	if r.Terminal != nil {
		term := *r.Terminal
		term.Command = textcut.Prefix(term.Command, limit)
		term.Output = textcut.TailLines(term.Output, limit)
		out.Terminal = &term
	}
	if r.Diff != nil {
		out.Diff = &harness.Diff{Path: r.Diff.Path, Added: r.Diff.Added, Removed: r.Diff.Removed, Truncated: true}
	}
	if len(r.Locations) > 0 {
		out.Locations = r.Locations[:min(len(r.Locations), 100)]
	}
	return out
}
