package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/diff"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

type writeArgs struct {
	FilePath string `json:"file_path" jsonschema:"Absolute or relative to the working directory."`
	Content  string `json:"content" jsonschema:"The whole new content."`
}

// Write returns the write tool: write(file_path, content). It creates a
// file, or replaces a whole file the session has seen at its current
// version (see fs.Ledger), atomically, keeping the replaced file's line
// endings and byte order mark. Results carry a diff render and a
// FileAccess of op write with the new version.
func Write(cfg Config) tools.Tool {
	c := cfg.resolve()
	spec := tools.Spec{
		Name:        "write",
		InputSchema: json.RawMessage(writeSchema),
		Description: "Create or replace a whole file with UTF-8 text; missing parent directories are created. " +
			"An existing file must have been read in this session (any part) and not changed since, or write refuses. Prefer edit for partial changes. " +
			"A replaced file keeps its CRLF line endings and byte order mark: write plain line breaks. spill:// paths cannot be written.",
		SideEffects: true,
		Family:      tools.FamilyLocal,
		NeedsFS:     true,
		Render:      harness.RenderDiff,
	}
	return toolexec.Checked(tools.Define(spec, c.write), c.err)
}

func (c config) write(ctx context.Context, call *tools.Call, in writeArgs) (*harness.ToolResult, error) {
	p, fsys, err := prepare(call, "write", in.FilePath, true)
	if err != nil {
		return nil, err
	}
	ledger := call.Env.Ledger()
	if ledger == nil {
		return nil, &harness.Error{Code: harness.CodeToolFailed, Message: "The session is closing; write cannot run."}
	}
	pre := ledger.WritePrecondition(p)
	res, err := fsys.Write(ctx, p, []byte(in.Content), fs.WriteOptions{Pre: pre, KeepStyle: true})
	if err != nil {
		if errors.Is(err, harness.CodeExists) && pre.Absent {
			err = fs.NewError(harness.CodeNotObserved, &fs.PathError{Op: "write", Path: p, Detail: "the file exists and has not been read in this session", Err: err})
		}
		if errors.Is(err, harness.CodeStale) && pre.Version != "" {
			if _, serr := fsys.Stat(ctx, p); errors.Is(serr, harness.CodeNotFound) {
				ledger.Observe(p, "") // found deleted: forget it
			}
		}
		return nil, explain(ctx, call, "write", p, in.FilePath, err)
	}
	ledger.Observe(p, res.Info.Version)

	written := res.Written
	lines := countLines(written)
	var msg string
	switch {
	case res.Unchanged:
		msg = fmt.Sprintf("%s already had exactly this content; nothing was written.", p)
	case res.Created:
		msg = fmt.Sprintf("Created %s (%s, %s).", p, units.Plural(lines, "line", "lines"), units.Bytes(int64(len(written))))
	default:
		msg = fmt.Sprintf("Replaced the content of %s (now %s, %s).", p, units.Plural(lines, "line", "lines"), units.Bytes(int64(len(written))))
	}
	if !res.Unchanged && !bytes.Equal(written, []byte(in.Content)) {
		msg += " The file's Windows line endings and byte order mark were kept."
	}

	var render *harness.Render
	title := "Write " + titlePath(fsys, p)
	switch {
	case res.Created && len(written) > maxDiffInput:
		render = &harness.Render{Kind: harness.RenderDiff, Title: "Create " + titlePath(fsys, p), Diff: &harness.Diff{Path: p, Added: lines, Truncated: true}}
	case res.Created:
		render = c.diffRender("Create "+titlePath(fsys, p), p, nil, written, true, diff.Lines(nil, diff.SplitLines(written)))
	case res.Previous == nil || len(res.Previous)+len(written) > maxDiffInput:
		// Too large to diff (or the replaced file was too large to
		// keep): no hunks.
		render = &harness.Render{Kind: harness.RenderDiff, Title: title, Diff: &harness.Diff{Path: p, Truncated: true}}
	default:
		script := diff.Lines(diff.SplitLines(res.Previous), diff.SplitLines(written))
		render = c.diffRender(title, p, res.Previous, written, false, script)
		if !res.Unchanged {
			msg = fmt.Sprintf("Replaced the content of %s: +%d -%d lines (now %s, %s).", p, render.Diff.Added, render.Diff.Removed,
				units.Plural(lines, "line", "lines"), units.Bytes(int64(len(written))))
			if !bytes.Equal(written, []byte(in.Content)) {
				msg += " The file's Windows line endings and byte order mark were kept."
			}
		}
	}
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(msg)},
		Render:  render,
		Files:   []harness.FileAccess{{Op: harness.FileWrite, Path: p, Version: res.Info.Version}},
	}, nil
}

// maxDiffInput bounds the text a write diffs for its render.
const maxDiffInput = 16 << 20

// countLines counts lines as read does: a final line without a line feed
// counts, an empty text has none.
func countLines(b []byte) int {
	b = bytes.TrimPrefix(b, []byte(fsimpl.BOM))
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
