package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/diff"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

type editArgs struct {
	FilePath   string `json:"file_path" jsonschema:"Absolute or relative to the working directory."`
	OldString  string `json:"old_string" jsonschema:"Exact text to replace; not empty."`
	NewString  string `json:"new_string" jsonschema:"Replacement, different from old_string; empty deletes."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence."`
}

// Edit returns the edit tool: edit(file_path, old_string, new_string,
// replace_all?). It replaces literal text in a file the session has seen
// at its current version (see fs.Ledger and fs.ApplyEdit), atomically.
// The reply shows the changed lines, numbered as read numbers them.
// Results carry a diff render and a FileAccess of op write with the new
// version.
func Edit(cfg Config) tools.Tool {
	c := cfg.resolve()
	spec := tools.Spec{
		Name:        "edit",
		InputSchema: json.RawMessage(editSchema),
		Description: "Replace exact text in a file read (any part) or written in this session and unchanged since; otherwise read it again. " +
			"old_string must occur exactly once (unless replace_all), exactly, with indentation and line breaks, without read's `N: ` prefixes; " +
			"include enough surrounding lines to make it unique. CRLF line endings and a byte order mark are kept.",
		SideEffects: true,
		Family:      tools.FamilyLocal,
		NeedsFS:     true,
		Render:      harness.RenderDiff,
	}
	return toolexec.Checked(tools.Define(spec, c.edit), c.err)
}

func (c config) edit(ctx context.Context, call *tools.Call, in editArgs) (*harness.ToolResult, error) {
	switch {
	case in.OldString == "":
		return nil, &harness.Error{Code: harness.CodeInvalidArguments,
			Message: "old_string is empty. Give the exact text to replace; to create a file or replace all of it, use write."}
	case strings.ReplaceAll(in.OldString, "\r\n", "\n") == strings.ReplaceAll(in.NewString, "\r\n", "\n"):
		return nil, &harness.Error{Code: harness.CodeInvalidArguments,
			Message: "old_string and new_string are the same, so the edit would change nothing. Give the new text in new_string."}
	}
	p, fsys, err := prepare(call, "edit", in.FilePath, true)
	if err != nil {
		return nil, err
	}
	ledger := call.Env.Ledger()
	if ledger == nil {
		return nil, &harness.Error{Code: harness.CodeToolFailed, Message: "The session is closing; edit cannot run."}
	}
	pre, err := ledger.EditPrecondition(p)
	if err != nil {
		// Say first what the model can act on: a missing file or a
		// directory is not cured by reading it.
		st, serr := fsys.Stat(ctx, p)
		switch {
		case serr != nil:
			err = serr
		case st.Mode.IsDir():
			err = fs.NewError(harness.CodeNotRegular, &fs.PathError{Op: "edit", Path: p, Detail: "is a directory"})
		}
		return nil, explain(ctx, call, "edit", p, in.FilePath, err)
	}
	res, err := fsys.Edit(ctx, p, fs.Edit{Old: in.OldString, New: in.NewString, ReplaceAll: in.ReplaceAll}, pre)
	if err != nil {
		if errors.Is(err, harness.CodeNotFound) {
			ledger.Observe(p, "") // found deleted: forget it
		}
		return nil, explain(ctx, call, "edit", p, in.FilePath, err)
	}
	ledger.Observe(p, res.Info.Version)

	regions := make([]diff.Region, len(res.Spans))
	for i, s := range res.Spans {
		regions[i] = diff.Region{OldStart: s.OldStart, OldEnd: s.OldEnd, NewStart: s.NewStart, NewEnd: s.NewEnd}
	}
	script := diff.RegionScript(res.Old, res.New, regions, contextLines)
	render := c.diffRender("Edit "+titlePath(fsys, p), p, res.Old, res.New, false, script)

	msg := fmt.Sprintf("Edited %s: replaced %s (+%d -%d lines).", p,
		units.Plural(res.Replacements, "occurrence", "occurrences"), render.Diff.Added, render.Diff.Removed)
	if len(res.Spans) == 1 {
		msg += c.snippet(res.New, res.Spans[0])
	}
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(msg)},
		Render:  render,
		Files:   []harness.FileAccess{{Op: harness.FileWrite, Path: p, Version: res.Info.Version}},
	}, nil
}

// snippetMax bounds the lines an edit reply shows.
const snippetMax = 16

// snippet shows the lines of content around span, numbered as read
// numbers them, so the model can check the result without reading again.
func (c config) snippet(content []byte, s fs.Span) string {
	body := content
	bom := 0
	if bytes.HasPrefix(body, []byte(fsimpl.BOM)) {
		bom = len(fsimpl.BOM)
	}
	first := 1 + bytes.Count(body[:s.NewStart], []byte{'\n'})
	last := first + bytes.Count(body[s.NewStart:s.NewEnd], []byte{'\n'})
	if s.NewEnd > s.NewStart && body[s.NewEnd-1] == '\n' {
		last-- // the replacement ends its last line
	}
	from := max(1, first-2)
	// Find the start of line from.
	at := bom
	for l := 1; l < from; l++ {
		i := bytes.IndexByte(body[at:], '\n')
		at += i + 1
	}
	to := last + 2
	if to-from+1 > snippetMax {
		return ""
	}
	var b strings.Builder
	b.WriteString(" The lines around the change now read:\n")
	for l := from; l <= to && at < len(body); l++ {
		line := body[at:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
			at += i + 1
		} else {
			at = len(body)
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		text := textcut.Prefix(string(line), c.lineRunes*4)
		b.WriteString(strconv.Itoa(l))
		b.WriteString(": ")
		b.WriteString(text)
		if len(text) < len(line) {
			b.WriteString(" [… cut]")
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}
