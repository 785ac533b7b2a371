package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

type readArgs struct {
	FilePath string `json:"file_path" jsonschema:"Absolute, relative to the working directory, or spill:// (a saved tool output)."`
	Offset   int    `json:"offset,omitempty" jsonschema:"First line to show, from 1."`
	Limit    int    `json:"limit,omitempty" jsonschema:"Most lines to show."`
}

// Read returns the read tool: read(file_path, offset?, limit?). It shows a
// window of a UTF-8 text file with numbered lines and one footer saying
// where the window ends and how to continue, records the file's version
// in the session's Ledger, and also reads saved outputs (tools.OutputScheme
// locators) through Env.Output with the same windowing.
//
// Results carry a locations render and a FileAccess of op read with the
// line window; the tool is concurrency-safe and never spilled.
func Read(cfg Config) tools.Tool {
	c := cfg.resolve()
	spec := tools.Spec{
		Name:            "read",
		InputSchema:     json.RawMessage(readSchema),
		Description:     readDescription(c),
		ConcurrencySafe: true,
		Family:          tools.FamilyLocal,
		NeedsFS:         true,
		Render:          harness.RenderLocations,
		NeverSpill:      true,
	}
	return toolexec.Checked(tools.Define(spec, c.read), c.err)
}

func readDescription(c config) string {
	return fmt.Sprintf("Read a UTF-8 text file as numbered lines, `N: text` (the prefix is not part of the file). "+
		"Up to %d lines per call, also limit's maximum; the footer says whether the end was reached and which offset is next. "+
		"Lines over %d characters are cut; at most %s per call. CRLF shows as plain line breaks. Binary and non-UTF-8 files are refused.",
		c.lines, c.lineRunes, sizeLimit(c.maxBytes))
}

func sizeLimit(n int) string { return units.Bytes(int64(n)) }

func (c config) window(in readArgs) (fs.Window, error) {
	if in.Offset < 0 {
		return fs.Window{}, &harness.Error{Code: harness.CodeInvalidArguments,
			Message: fmt.Sprintf("offset is %d; it must be a line number from 1 up (or left out to start at line 1).", in.Offset)}
	}
	if in.Limit < 0 {
		return fs.Window{}, &harness.Error{Code: harness.CodeInvalidArguments,
			Message: fmt.Sprintf("limit is %d; it must be a positive number of lines (at most %d), or left out.", in.Limit, c.lines)}
	}
	limit := in.Limit
	if limit == 0 || limit > c.lines {
		limit = c.lines
	}
	return fs.Window{Offset: max(in.Offset, 1), Limit: limit, MaxLineRunes: c.lineRunes, MaxBytes: c.maxBytes}, nil
}

func (c config) read(ctx context.Context, call *tools.Call, in readArgs) (*harness.ToolResult, error) {
	w, err := c.window(in)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(in.FilePath, tools.OutputScheme) {
		return c.readSaved(ctx, call, in.FilePath, w)
	}
	p, fsys, err := prepare(call, "read", in.FilePath, false)
	if err != nil {
		return nil, err
	}
	text, err := fsys.ReadText(ctx, p, w)
	if err != nil {
		return nil, explain(ctx, call, "read", p, in.FilePath, err)
	}
	if l := call.Env.Ledger(); l != nil && text.Info.Version != "" {
		l.Observe(p, text.Info.Version)
	}
	body := c.format("File: "+p, text)
	start, end := text.Offset, windowEnd(text)
	if len(text.Lines) == 0 {
		start, end = 0, 0
	}
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(body)},
		Render: &harness.Render{Kind: harness.RenderLocations, Title: readTitle(titlePath(fsys, p), text),
			Locations: []harness.Location{{Path: p, StartLine: start, EndLine: end}}},
		Files: []harness.FileAccess{{Op: harness.FileRead, Path: p, Version: text.Info.Version,
			StartLine: start, EndLine: end, Complete: windowComplete(text)}},
	}, nil
}

// windowReader is an output store that reads a window of a saved
// output's lines without fetching the rest (spill/s3 is one); the read
// tool uses it when the session's store has it.
type windowReader interface {
	ReadWindow(ctx context.Context, locator string, w fs.Window) (*fs.Text, error)
}

// readSaved reads a saved output through the session's output store.
func (c config) readSaved(ctx context.Context, call *tools.Call, locator string, w fs.Window) (*harness.ToolResult, error) {
	if call.Env == nil || call.Env.Output == nil {
		return nil, &harness.Error{Code: harness.CodeNotFound,
			Message: fmt.Sprintf("%s names a saved output, but this session keeps no saved outputs.", locator)}
	}
	if savedHidden(ctx, call.Env, locator) {
		return nil, openSavedErr(ctx, locator, fs.NewError(harness.CodeNotFound, &fs.PathError{Op: "read", Path: locator, Err: iofs.ErrNotExist}))
	}
	var text *fs.Text
	if wr, ok := call.Env.Output.(windowReader); ok {
		t, err := wr.ReadWindow(ctx, locator, w)
		if err != nil {
			if errors.Is(err, harness.CodeNotFound) || errors.Is(err, iofs.ErrNotExist) || ctx.Err() != nil {
				return nil, openSavedErr(ctx, locator, err)
			}
			return nil, explain(ctx, call, "read", locator, locator, err)
		}
		text = t
	} else {
		rc, err := call.Env.Output.Open(ctx, locator)
		if err != nil {
			return nil, openSavedErr(ctx, locator, err)
		}
		defer rc.Close()
		text, err = fs.ScanText(ctx, rc, w)
		if err != nil {
			return nil, explain(ctx, call, "read", locator, locator, err)
		}
	}
	start, end := text.Offset, windowEnd(text)
	if len(text.Lines) == 0 {
		start, end = 0, 0
	}
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(c.format("Saved output: "+locator, text))},
		Render: &harness.Render{Kind: harness.RenderLocations, Title: readTitle(locator, text),
			Locations: []harness.Location{{Path: locator, StartLine: start, EndLine: end}}},
	}, nil
}

// localLocator is an output store that keeps outputs in OS files (the
// spill package's directory store).
type localLocator interface {
	LocalPath(locator string) (string, error)
}

// savedHidden reports whether the session's path policy (fs.PolicyOf its
// file system) hides the file a saved output is kept in, which then reads
// as absent.
func savedHidden(ctx context.Context, env *tools.Env, locator string) bool {
	if env.FS == nil {
		return false
	}
	pol := fs.PolicyOf(env.FS)
	ll, ok := env.Output.(localLocator)
	if pol == nil || !ok {
		return false
	}
	p, err := ll.LocalPath(locator)
	if err != nil {
		return false // not a file of the store: Open refuses it
	}
	return pol.CheckPath(ctx, filepath.ToSlash(p), fs.AccessRead, fs.FileID{}) != nil
}

// openSavedErr explains a saved output that could not be opened.
func openSavedErr(ctx context.Context, locator string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, harness.CodeNotFound) || errors.Is(err, iofs.ErrNotExist) {
		return &harness.Error{Code: harness.CodeNotFound, Err: err,
			Message: fmt.Sprintf("There is no saved output %s. It may have been removed; run the command again to get its output.", locator)}
	}
	return &harness.Error{Code: harness.CodeIO, Err: err,
		Message: fmt.Sprintf("The saved output %s could not be opened: %v.", locator, err)}
}

func readTitle(name string, t *fs.Text) string {
	if len(t.Lines) == 0 {
		return "Read " + name + " (empty)"
	}
	return fmt.Sprintf("Read %s (lines %d-%d of %d)", name, t.Offset, windowEnd(t), t.TotalLines)
}

// format renders a window: a header line, the numbered lines, and one
// footer.
func (c config) format(header string, t *fs.Text) string {
	var b strings.Builder
	b.Grow(len(header) + 64 + int(min(t.Size, int64(c.maxBytes))) + 8*len(t.Lines))
	b.WriteString(header)
	var notes []string
	if t.CRLF {
		notes = append(notes, "Windows (CRLF) line endings, shown as plain line breaks; write and edit keep them")
	}
	if t.BOM {
		notes = append(notes, "starts with a UTF-8 byte order mark, not shown; write and edit keep it")
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	b.WriteByte('\n')
	var num [20]byte
	for i, l := range t.Lines {
		b.Write(strconv.AppendInt(num[:0], int64(t.Offset+i), 10))
		b.WriteString(": ")
		b.WriteString(l.Text)
		if l.Cut > 0 {
			fmt.Fprintf(&b, " [… %d more characters cut]", l.Cut)
		}
		b.WriteByte('\n')
	}
	b.WriteString(c.footer(t))
	return b.String()
}

func (c config) footer(t *fs.Text) string {
	var f string
	end := windowEnd(t)
	switch {
	case t.TotalLines == 0:
		f = "(The file is empty.)"
	case t.Capped:
		f = fmt.Sprintf("(Output limit of %s reached: lines %d-%d of %d shown. To continue, call read with offset=%d.)",
			sizeLimit(c.maxBytes), t.Offset, end, t.TotalLines, end+1)
	case end < t.TotalLines:
		f = fmt.Sprintf("(Lines %d-%d of %d shown. To continue, call read with offset=%d.)", t.Offset, end, t.TotalLines, end+1)
	case t.Offset <= 1:
		f = fmt.Sprintf("(End of file: all %s shown.)", units.Plural(t.TotalLines, "line", "lines"))
	default:
		f = fmt.Sprintf("(End of file: lines %d-%d of %d shown.)", t.Offset, end, t.TotalLines)
	}
	if n := cutLines(t); n > 0 {
		f = f[:len(f)-1] + fmt.Sprintf(" %s longer than %d characters %s cut; the rest of such a line cannot be shown by read.)",
			units.Plural(n, "line", "lines"), c.lineRunes, map[bool]string{true: "was", false: "were"}[n == 1])
	}
	return f
}

// windowEnd returns the number of the last line of the window, or
// Offset-1 for an empty window.
func windowEnd(t *fs.Text) int { return t.Offset + len(t.Lines) - 1 }

// cutLines returns how many lines of the window were cut.
func cutLines(t *fs.Text) int {
	n := 0
	for _, l := range t.Lines {
		if l.Cut > 0 {
			n++
		}
	}
	return n
}

// windowComplete reports that the window holds the whole file, no line
// cut.
func windowComplete(t *fs.Text) bool {
	return t.Offset <= 1 && windowEnd(t) == t.TotalLines && cutLines(t) == 0
}
