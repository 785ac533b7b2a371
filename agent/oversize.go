package agent

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-harness/harness/internal/spillwriter"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// logOversized handles a result whose event the session log refused as
// too large (err matches harness.CodeTooLarge; any other err is
// returned as it is). The result's text is saved whole through the
// session's output store and replaced by a head and tail preview that
// names the saved output, the preview the spill policy shows; with no
// output store, or when saving fails, the preview says the middle is
// lost. The render data is slimmed, and dropped with the file records if
// even that does not fit. It returns the result as logged, which is what
// the model sees and the host is shown.
func (t *turn) logOversized(ev *session.ToolFinished, res *harness.ToolResult, err error) (*harness.ToolResult, error) {
	var tooLarge *session.EventTooLargeError
	if !errors.As(err, &tooLarge) {
		return nil, err
	}
	limit := previewLimit(tooLarge.Max)
	r := ev.Result
	var stored tools.Stored
	var saveErr error
	if text := res.Text(); len(text) > limit {
		owner := tools.Owner{Session: t.s.Header().ID, Tool: ev.Name, Call: ev.CallID}
		// The save outlives a cancelled turn: the result is logged either way.
		// previewLimit is never below spillwriter.MinThreshold, so NewWriter
		// cannot refuse it.
		w, werr := spillwriter.NewWriter(context.WithoutCancel(t.ctx), t.l.cfg.output, owner, limit)
		if werr != nil {
			return nil, errors.Join(err, werr)
		}
		_, _ = io.WriteString(w, text) // a Writer fails writes only after Close
		saveErr = w.Close()
		out := w.Output()
		stored = out.Stored
		r.Content = withText(r.Content, out.Text+fmt.Sprintf(
			"\n[This result is a preview: the whole result is more than the %d bytes the session log holds in one event.]", tooLarge.Max))
	}
	shrinks := []func(*harness.ToolResult){
		func(*harness.ToolResult) {},
		func(r *harness.ToolResult) { r.Render = slimRender(r.Render, limit) },
		func(r *harness.ToolResult) { r.Render, r.Files = nil, nil },
	}
	for _, shrink := range shrinks {
		shrink(&r)
		logged := *ev
		logged.Result = r
		err = t.s.append(t.ctx, &logged)
		if err == nil {
			t.s.logger.Warn("a tool result too large for the session log was logged as a preview",
				"tool", ev.Name, "call_id", ev.CallID, "event_bytes", tooLarge.Size, "max_line_size", tooLarge.Max,
				"locator", stored.Locator, "save_error", saveErr)
			return &r, nil
		}
		if !errors.Is(err, harness.CodeTooLarge) {
			return nil, err
		}
	}
	return nil, err
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
