package files_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/toolstest"
)

type rig struct {
	t    *testing.T
	fsys fs.FileSystem
	env  *tools.Env
	out  spill.Store
	reg  *tools.Registry
	n    int
}

func newRig(t *testing.T, fsys fs.FileSystem, cwd string) *rig {
	t.Helper()
	reg, err := tools.NewRegistry(files.Tools(files.Config{})...)
	require.NoError(t, err)
	env := toolstest.NewEnv()
	t.Cleanup(func() { env.Close() })
	env.Env.SessionID, env.Env.Cwd, env.Env.FS = "s", cwd, fsys
	return &rig{t: t, fsys: fsys, reg: reg, env: env.Env, out: env.Output}
}

// call runs a tool call the way the loop dispatches it.
func (r *rig) call(name string, args any) *harness.ToolResult {
	r.t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(r.t, err)
	r.n++
	c := &tools.Call{ID: fmt.Sprint("c", r.n), Name: name, Arguments: string(raw), Env: r.env}
	if res := r.reg.Check(c); res != nil {
		return res
	}
	return toolexec.Executor()(context.Background(), c)
}

func (r *rig) ok(name string, args any) *harness.ToolResult {
	r.t.Helper()
	res := r.call(name, args)
	require.False(r.t, res.IsError, "%s failed: %s", name, res.Text())
	return res
}

func (r *rig) fails(name string, args any, code harness.Code) string {
	r.t.Helper()
	res := r.call(name, args)
	require.True(r.t, res.IsError, "%s should fail, got: %s", name, res.Text())
	assert.Equal(r.t, harness.Code(code), res.Code, res.Text())
	return res.Text()
}

func (r *rig) content(p string) string {
	r.t.Helper()
	b, _, err := r.fsys.ReadBytes(context.Background(), p, 1<<30)
	require.NoError(r.t, err)
	return string(b)
}

func (r *rig) put(p, content string) {
	r.t.Helper()
	_, err := r.fsys.Write(context.Background(), p, []byte(content), fs.WriteOptions{})
	require.NoError(r.t, err)
}

func memRig(t *testing.T) *rig {
	return newRig(t, fstest.NewMemFS("/project"), "/project")
}

func TestSpecs(t *testing.T) {
	r := memRig(t)
	specs := r.reg.Specs()
	require.Len(t, specs, 3)
	byName := map[string]tools.Spec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	read := byName["read"]
	assert.True(t, read.ConcurrencySafe)
	assert.True(t, read.NeverSpill)
	assert.False(t, read.SideEffects)
	assert.Equal(t, tools.FamilyLocal, read.Family)
	assert.Equal(t, harness.RenderLocations, read.Render)
	for _, n := range []string{"write", "edit"} {
		assert.False(t, byName[n].ConcurrencySafe, n)
		assert.True(t, byName[n].SideEffects, n)
		assert.Equal(t, tools.FamilyLocal, byName[n].Family, n)
		assert.Equal(t, harness.RenderDiff, byName[n].Render, n)
	}
	schema := func(name string) (props []string, required []string) {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		require.NoError(t, json.Unmarshal(byName[name].InputSchema, &s))
		for p := range s.Properties {
			props = append(props, p)
		}
		return props, s.Required
	}
	props, req := schema("read")
	assert.ElementsMatch(t, []string{"file_path", "offset", "limit"}, props)
	assert.Equal(t, []string{"file_path"}, req)
	props, req = schema("write")
	assert.ElementsMatch(t, []string{"file_path", "content"}, props)
	assert.ElementsMatch(t, []string{"file_path", "content"}, req)
	props, req = schema("edit")
	assert.ElementsMatch(t, []string{"file_path", "old_string", "new_string", "replace_all"}, props)
	assert.ElementsMatch(t, []string{"file_path", "old_string", "new_string"}, req)
	assert.Contains(t, read.Description, "2000 lines")
	assert.Contains(t, read.Description, "50.0 KiB")

	custom := files.Read(files.Config{Lines: 100, LineRunes: 80, MaxBytes: 4096})
	assert.Contains(t, custom.Spec().Description, "Up to 100 lines")
	assert.Contains(t, custom.Spec().Description, "over 80 characters")
	assert.Contains(t, custom.Spec().Description, "4.0 KiB")
}

func TestConfigRefusesNegativeLimits(t *testing.T) {
	for _, cfg := range []files.Config{{Lines: -1}, {MaxBytes: -4096}, {LineRunes: -1}, {DiffText: -1}, {DiffLines: -1}} {
		for _, tool := range files.Tools(cfg) {
			_, err := tools.NewRegistry(tool)
			require.ErrorIs(t, err, harness.CodeInvalidOption, tool.Spec().Name)
			assert.Contains(t, err.Error(), "must not be negative")
		}
	}
	_, err := tools.NewRegistry(files.Tools(files.Config{})...)
	assert.NoError(t, err, "zero keeps the defaults")
}

func TestReadShowsNumberedLines(t *testing.T) {
	r := memRig(t)
	r.put("/project/src/main.go", "package main\n\nfunc main() {}\n")
	res := r.ok("read", map[string]any{"file_path": "src/main.go"})
	assert.Equal(t, "File: /project/src/main.go\n1: package main\n2: \n3: func main() {}\n(End of file: all 3 lines shown.)", res.Text())
	require.Len(t, res.Files, 1)
	f := res.Files[0]
	assert.Equal(t, harness.FileRead, f.Op)
	assert.Equal(t, "/project/src/main.go", f.Path)
	assert.NotEmpty(t, f.Version)
	assert.Equal(t, 1, f.StartLine)
	assert.Equal(t, 3, f.EndLine)
	assert.True(t, f.Complete)
	require.NotNil(t, res.Render)
	assert.Equal(t, harness.RenderLocations, res.Render.Kind)
	assert.Equal(t, []harness.Location{{Path: "/project/src/main.go", StartLine: 1, EndLine: 3}}, res.Render.Locations)
	assert.Equal(t, "Read src/main.go (lines 1-3 of 3)", res.Render.Title)
	v, ok := r.env.Ledger().Version("/project/src/main.go")
	assert.True(t, ok, "a read is recorded in the ledger")
	assert.Equal(t, f.Version, v)
}

func TestReadFooters(t *testing.T) {
	r := memRig(t)
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	r.put("/project/a.txt", b.String())

	res := r.ok("read", map[string]any{"file_path": "/project/a.txt", "limit": 2})
	assert.Equal(t, "File: /project/a.txt\n1: line 1\n2: line 2\n(Lines 1-2 of 30 shown. To continue, call read with offset=3.)", res.Text())
	assert.False(t, res.Files[0].Complete)

	res = r.ok("read", map[string]any{"file_path": "/project/a.txt", "offset": 29})
	assert.Equal(t, "File: /project/a.txt\n29: line 29\n30: line 30\n(End of file: lines 29-30 of 30 shown.)", res.Text())
	assert.Equal(t, 29, res.Files[0].StartLine)
	assert.Equal(t, 30, res.Files[0].EndLine)

	msg := r.fails("read", map[string]any{"file_path": "/project/a.txt", "offset": 31}, harness.CodePastEnd)
	assert.Equal(t, "offset is past the end of /project/a.txt, which has 30 lines. Use an offset from 1 to 30.", msg)

	r.put("/project/empty.txt", "")
	res = r.ok("read", map[string]any{"file_path": "/project/empty.txt"})
	assert.Equal(t, "File: /project/empty.txt\n(The file is empty.)", res.Text())
	assert.True(t, res.Files[0].Complete)
	assert.Zero(t, res.Files[0].StartLine)

	msg = r.fails("read", map[string]any{"file_path": "/project/a.txt", "offset": -1}, harness.CodeInvalidArguments)
	assert.Contains(t, msg, "offset is -1")
	msg = r.fails("read", map[string]any{"file_path": "/project/a.txt", "limit": -5}, harness.CodeInvalidArguments)
	assert.Contains(t, msg, "limit is -5")
}

func TestReadCapsAndCuts(t *testing.T) {
	r := newRig(t, fstest.NewMemFS("/w"), "/w")
	reg, err := tools.NewRegistry(files.Read(files.Config{Lines: 10, LineRunes: 5, MaxBytes: 20}))
	require.NoError(t, err)
	r.reg = reg
	r.put("/w/a.txt", "abcdefghij\nshort\nxx\nyy\nzz\n")
	res := r.ok("read", map[string]any{"file_path": "/w/a.txt"})
	assert.Equal(t, "File: /w/a.txt\n1: abcde [… 5 more characters cut]\n2: short\n3: xx\n4: yy\n"+
		"(Output limit of 20 bytes reached: lines 1-4 of 5 shown. To continue, call read with offset=5. "+
		"1 line longer than 5 characters was cut; the rest of such a line cannot be shown by read.)", res.Text())
	assert.False(t, res.Files[0].Complete)

	// A limit above the maximum is clamped.
	r.put("/w/many.txt", strings.Repeat("x\n", 50))
	res = r.ok("read", map[string]any{"file_path": "/w/many.txt", "limit": 1000})
	assert.Contains(t, res.Text(), "(Lines 1-10 of 50 shown. To continue, call read with offset=11.)")
}

func TestReadStyleNotes(t *testing.T) {
	r := memRig(t)
	r.put("/project/win.txt", fsimpl.BOM+"a\r\nb\r\n")
	res := r.ok("read", map[string]any{"file_path": "win.txt"})
	assert.Equal(t, "File: /project/win.txt (Windows (CRLF) line endings, shown as plain line breaks; write and edit keep them; "+
		"starts with a UTF-8 byte order mark, not shown; write and edit keep it)\n1: a\n2: b\n(End of file: all 2 lines shown.)", res.Text())
}

func TestReadErrors(t *testing.T) {
	r := memRig(t)
	r.put("/project/src/handler.go", "package src\n")
	r.put("/project/src/util.go", "package src\n")
	r.put("/project/logo.png", "\x89PNG\r\n\x1a\n\x00\x00")
	r.put("/project/data.bin", "\x00\x01\x02")

	msg := r.fails("read", map[string]any{"file_path": "src/handlr.go"}, harness.CodeNotFound)
	assert.Equal(t, "File not found: /project/src/handlr.go (relative paths are resolved against the working directory /project). Did you mean /project/src/handler.go?", msg)
	msg = r.fails("read", map[string]any{"file_path": "/project/src"}, harness.CodeNotRegular)
	assert.Equal(t, "/project/src is a directory, not a file. It contains: handler.go, util.go. Give the path of a file in it.", msg)
	msg = r.fails("read", map[string]any{"file_path": "/project/logo.png"}, harness.CodeNotText)
	assert.Contains(t, msg, "is not UTF-8 text (NUL byte at byte offset 8: the file is binary)")
	assert.Contains(t, msg, "use read_image")
	msg = r.fails("read", map[string]any{"file_path": "/project/data.bin"}, harness.CodeNotText)
	assert.Contains(t, msg, "shell command")
	msg = r.fails("read", map[string]any{"file_path": "/etc/passwd"}, harness.CodeOutsideRoot)
	assert.Equal(t, "/etc/passwd cannot be accessed: it is outside the workspace. Only files under /project can be used.", msg)
	msg = r.fails("read", map[string]any{"file_path": "../secret"}, harness.CodeOutsideRoot)
	assert.Contains(t, msg, "/secret cannot be accessed")
	msg = r.fails("read", map[string]any{"file_path": "a\x00b"}, harness.CodeInvalidPath)
	assert.Contains(t, msg, "contains a NUL byte")
	msg = r.fails("read", map[string]any{"file_path": ""}, harness.CodeInvalidArguments)
	assert.Contains(t, msg, "file_path is empty")
	msg = r.fails("read", map[string]any{"file_path": "x", "bogus": 1}, harness.CodeInvalidArguments)
	assert.Contains(t, msg, "bogus")
}

func TestReadSavedOutput(t *testing.T) {
	r := memRig(t)
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "out %d\n", i)
	}
	st, err := r.out.Save(context.Background(), tools.Owner{Session: "s", Tool: "bash", Call: "c1"}, strings.NewReader(b.String()))
	require.NoError(t, err)
	loc := st.Locator
	res := r.ok("read", map[string]any{"file_path": loc, "offset": 4999})
	assert.Equal(t, "Saved output: "+loc+"\n4999: out 4999\n5000: out 5000\n(End of file: lines 4999-5000 of 5000 shown.)", res.Text())
	assert.Empty(t, res.Files, "a saved output is not a file")
	assert.Equal(t, []harness.Location{{Path: loc, StartLine: 4999, EndLine: 5000}}, res.Render.Locations)
	res = r.ok("read", map[string]any{"file_path": loc})
	assert.Contains(t, res.Text(), "(Lines 1-2000 of 5000 shown. To continue, call read with offset=2001.)")

	msg := r.fails("read", map[string]any{"file_path": "spill://s/gone"}, harness.CodeNotFound)
	assert.Contains(t, msg, "There is no saved output spill://s/gone")
	r.env.Output = nil
	msg = r.fails("read", map[string]any{"file_path": loc}, harness.CodeNotFound)
	assert.Contains(t, msg, "keeps no saved outputs")

	msg = r.fails("write", map[string]any{"file_path": loc, "content": "x"}, harness.CodePermission)
	assert.Contains(t, msg, "read-only")
	msg = r.fails("edit", map[string]any{"file_path": "spill://s/c1", "old_string": "a", "new_string": "b"}, harness.CodePermission)
	assert.Contains(t, msg, "read-only")
}

// windowed is an output store that reads windows itself, as spill/s3
// does, and records them; Open is never used.
type windowed struct {
	outputs map[string]string
	asked   []fs.Window
}

func (w *windowed) Save(ctx context.Context, owner tools.Owner, r io.Reader) (tools.Stored, error) {
	return tools.Stored{}, fmt.Errorf("Save called for %s: %w", owner.Call, harness.CodeIO)
}

func (w *windowed) Open(ctx context.Context, locator string) (io.ReadCloser, error) {
	return nil, fmt.Errorf("Open called for %s: %w", locator, harness.CodeIO)
}

func (w *windowed) ReadWindow(ctx context.Context, locator string, win fs.Window) (*fs.Text, error) {
	w.asked = append(w.asked, win)
	s, ok := w.outputs[locator]
	if !ok {
		return nil, fmt.Errorf("open %s: %w", locator, harness.CodeNotFound)
	}
	return fs.ScanText(ctx, strings.NewReader(s), win)
}

func TestReadSavedOutputWindowed(t *testing.T) {
	r := memRig(t)
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "out %d\n", i)
	}
	store := &windowed{outputs: map[string]string{"spill://s/c1": b.String()}}
	r.env.Output = store
	res := r.ok("read", map[string]any{"file_path": "spill://s/c1", "offset": 4999, "limit": 5})
	assert.Equal(t, "Saved output: spill://s/c1\n4999: out 4999\n5000: out 5000\n(End of file: lines 4999-5000 of 5000 shown.)", res.Text())
	require.Len(t, store.asked, 1, "the store read the window itself")
	assert.Equal(t, 4999, store.asked[0].Offset)
	assert.Equal(t, 5, store.asked[0].Limit)
	msg := r.fails("read", map[string]any{"file_path": "spill://s/gone"}, harness.CodeNotFound)
	assert.Contains(t, msg, "There is no saved output spill://s/gone")
	msg = r.fails("read", map[string]any{"file_path": "spill://s/c1", "offset": 6000}, harness.CodePastEnd)
	assert.Contains(t, msg, "5000")
}

func TestWriteLedgerRules(t *testing.T) {
	r := memRig(t)
	// Creating a file needs no read.
	res := r.ok("write", map[string]any{"file_path": "new/notes.md", "content": "# Notes\n"})
	assert.Equal(t, "Created /project/new/notes.md (1 line, 8 bytes).", res.Text())
	require.Len(t, res.Files, 1)
	assert.Equal(t, harness.FileWrite, res.Files[0].Op)
	assert.NotEmpty(t, res.Files[0].Version)
	require.Equal(t, harness.RenderDiff, res.Render.Kind)
	assert.Nil(t, res.Render.Diff.OldText, "created: no old text")
	assert.Equal(t, "# Notes\n", res.Render.Diff.NewText)
	assert.Equal(t, 1, res.Render.Diff.Added)
	assert.Equal(t, []harness.Hunk{{OldStart: 0, OldLines: 0, NewStart: 1, NewLines: 1, Lines: []string{"+# Notes"}}}, res.Render.Diff.Hunks)

	// Its own write counts as seen: replacing it needs no read.
	res = r.ok("write", map[string]any{"file_path": "new/notes.md", "content": "# Notes\n\n- one\n"})
	assert.Equal(t, "Replaced the content of /project/new/notes.md: +2 -0 lines (now 3 lines, 15 bytes).", res.Text())
	require.NotNil(t, res.Render.Diff.OldText)
	assert.Equal(t, "# Notes\n", *res.Render.Diff.OldText)

	// An existing file nobody read is not overwritten.
	r.put("/project/config.yaml", "keep: true\n")
	msg := r.fails("write", map[string]any{"file_path": "config.yaml", "content": "lost\n"}, harness.CodeNotObserved)
	assert.Equal(t, "/project/config.yaml already exists and you have not read it in this session, so write will not overwrite it. Read the file first (any part is enough), then write again; for a change to part of it, prefer edit.", msg)
	assert.Equal(t, "keep: true\n", r.content("/project/config.yaml"))

	// A windowed read is enough.
	r.ok("read", map[string]any{"file_path": "config.yaml", "limit": 1})
	r.ok("write", map[string]any{"file_path": "config.yaml", "content": "keep: false\n"})
	assert.Equal(t, "keep: false\n", r.content("/project/config.yaml"))

	// A change by someone else after the read makes it stale.
	r.put("/project/config.yaml", "keep: maybe\n")
	msg = r.fails("write", map[string]any{"file_path": "config.yaml", "content": "mine\n"}, harness.CodeStale)
	assert.Equal(t, "/project/config.yaml changed after you last read it (another program or tool modified it). Read the file again, then retry the write with its current content.", msg)
	assert.Equal(t, "keep: maybe\n", r.content("/project/config.yaml"))

	// Identical content: nothing written.
	r.ok("read", map[string]any{"file_path": "config.yaml"})
	res = r.ok("write", map[string]any{"file_path": "config.yaml", "content": "keep: maybe\n"})
	assert.Equal(t, "/project/config.yaml already had exactly this content; nothing was written.", res.Text())
}

func TestWriteAfterDeletion(t *testing.T) {
	mem := fstest.NewMemFS("/project")
	r := newRig(t, mem, "/project")
	r.put("/project/a.txt", "a\n")
	r.ok("read", map[string]any{"file_path": "a.txt"})
	require.NoError(t, mem.Remove("/project/a.txt"))
	msg := r.fails("write", map[string]any{"file_path": "a.txt", "content": "b\n"}, harness.CodeStale)
	assert.Equal(t, "/project/a.txt was deleted after you last read it. If it should exist again, call write again to create it from scratch.", msg)
	r.ok("write", map[string]any{"file_path": "a.txt", "content": "b\n"})
	assert.Equal(t, "b\n", r.content("/project/a.txt"))

	r.ok("read", map[string]any{"file_path": "a.txt"})
	require.NoError(t, mem.Remove("/project/a.txt"))
	msg = r.fails("edit", map[string]any{"file_path": "a.txt", "old_string": "b", "new_string": "c"}, harness.CodeNotFound)
	assert.Contains(t, msg, "File not found: /project/a.txt")
	_, seen := r.env.Ledger().Version("/project/a.txt")
	assert.False(t, seen, "a file found deleted is forgotten")
}

func TestEdit(t *testing.T) {
	r := memRig(t)
	r.put("/project/calc.go", "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n")

	msg := r.fails("edit", map[string]any{"file_path": "calc.go", "old_string": "a - b", "new_string": "a + b"}, harness.CodeNotObserved)
	assert.Equal(t, "You have not read /project/calc.go in this session, so it cannot be edited yet. Read the file first (any part of it is enough), then retry.", msg)
	msg = r.fails("edit", map[string]any{"file_path": "nope.go", "old_string": "a", "new_string": "b"}, harness.CodeNotFound)
	assert.Equal(t, "File not found: /project/nope.go (relative paths are resolved against the working directory /project). To create a new file, use write.", msg)

	r.ok("read", map[string]any{"file_path": "calc.go", "offset": 3, "limit": 1})
	msg = r.fails("edit", map[string]any{"file_path": "calc.go", "old_string": "\treturn a - b", "new_string": "\treturn a + b"}, harness.CodeAmbiguousEdit)
	assert.Equal(t, "old_string occurs 2 times in /project/calc.go (starting at line 4 and 8). Include more of the surrounding lines so that it matches exactly once, or set replace_all to true to replace every occurrence.", msg)
	msg = r.fails("edit", map[string]any{"file_path": "calc.go", "old_string": "func Add(a, b int) int {\n    return a - b\n}", "new_string": "x"}, harness.CodeEditNotFound)
	assert.Contains(t, msg, "Text that matches if whitespace is ignored starts at line 3")

	res := r.ok("edit", map[string]any{"file_path": "calc.go", "old_string": "Add(a, b int) int {\n\treturn a - b", "new_string": "Add(a, b int) int {\n\t// sum\n\treturn a + b"})
	assert.Equal(t, "Edited /project/calc.go: replaced 1 occurrence (+2 -1 lines). The lines around the change now read:\n"+
		"1: package calc\n2: \n3: func Add(a, b int) int {\n4: \t// sum\n5: \treturn a + b\n6: }\n7: ", res.Text())
	require.Len(t, res.Files, 1)
	assert.Equal(t, harness.FileWrite, res.Files[0].Op)
	d := res.Render.Diff
	require.NotNil(t, d)
	assert.Equal(t, "/project/calc.go", d.Path)
	assert.Equal(t, 2, d.Added)
	assert.Equal(t, 1, d.Removed)
	require.NotNil(t, d.OldText)
	assert.Contains(t, *d.OldText, "return a - b")
	assert.Contains(t, d.NewText, "// sum")
	assert.Equal(t, []harness.Hunk{{OldStart: 1, OldLines: 7, NewStart: 1, NewLines: 8, Lines: []string{
		" package calc", " ", " func Add(a, b int) int {", "-\treturn a - b", "+\t// sum", "+\treturn a + b", " }", " ", " func Sub(a, b int) int {"}}}, d.Hunks)

	// Edit after edit needs no read; replace_all.
	res = r.ok("edit", map[string]any{"file_path": "calc.go", "old_string": "int", "new_string": "int64", "replace_all": true})
	assert.Equal(t, "Edited /project/calc.go: replaced 4 occurrences (+2 -2 lines).", res.Text())
	assert.Contains(t, r.content("/project/calc.go"), "func Sub(a, b int64) int64 {")

	msg = r.fails("edit", map[string]any{"file_path": "calc.go", "old_string": "", "new_string": "x"}, harness.CodeInvalidArguments)
	assert.Contains(t, msg, "old_string is empty")
	msg = r.fails("edit", map[string]any{"file_path": "calc.go", "old_string": "same", "new_string": "same"}, harness.CodeInvalidArguments)
	assert.Contains(t, msg, "are the same")

	// Changed behind the model's back: stale, before matching.
	r.put("/project/calc.go", "package calc // rewritten\n")
	msg = r.fails("edit", map[string]any{"file_path": "calc.go", "old_string": "func Add", "new_string": "func Plus"}, harness.CodeStale)
	assert.Contains(t, msg, "changed after you last read it")
	assert.Contains(t, msg, "Read the file again")
}

func TestEditDiffHunks(t *testing.T) {
	r := memRig(t)
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	r.put("/project/a.txt", b.String())
	r.ok("read", map[string]any{"file_path": "a.txt"})
	res := r.ok("edit", map[string]any{"file_path": "a.txt", "old_string": "line 20\n", "new_string": "line twenty\nline 20.5\n"})
	assert.Equal(t, []harness.Hunk{{OldStart: 17, OldLines: 7, NewStart: 17, NewLines: 8, Lines: []string{
		" line 17", " line 18", " line 19", "-line 20", "+line twenty", "+line 20.5", " line 21", " line 22", " line 23"}}}, res.Render.Diff.Hunks)
	assert.Contains(t, res.Text(), "18: line 18\n19: line 19\n20: line twenty\n21: line 20.5\n22: line 21\n23: line 22")
}

func TestCRLFAndBOMRoundTrip(t *testing.T) {
	r := memRig(t)
	orig := fsimpl.BOM + "first\r\nsecond\r\nthird\r\n"
	r.put("/project/win.ini", orig)
	res := r.ok("read", map[string]any{"file_path": "win.ini"})
	// Write back exactly what read showed.
	var shown []string
	for _, l := range strings.Split(res.Text(), "\n")[1:4] {
		shown = append(shown, l[strings.Index(l, ": ")+2:])
	}
	res = r.ok("write", map[string]any{"file_path": "win.ini", "content": strings.Join(shown, "\n") + "\n"})
	assert.Contains(t, res.Text(), "already had exactly this content")
	assert.Equal(t, orig, r.content("/project/win.ini"))

	res = r.ok("edit", map[string]any{"file_path": "win.ini", "old_string": "first\nsecond", "new_string": "one\ntwo\nthree"})
	assert.Equal(t, fsimpl.BOM+"one\r\ntwo\r\nthree\r\nthird\r\n", r.content("/project/win.ini"))
	assert.Contains(t, res.Text(), "1: one\n2: two\n3: three\n4: third")

	res = r.ok("write", map[string]any{"file_path": "win.ini", "content": "a\nb\n"})
	assert.Equal(t, fsimpl.BOM+"a\r\nb\r\n", r.content("/project/win.ini"))
	assert.Contains(t, res.Text(), "Windows line endings and byte order mark were kept")
}

func TestLargeDiffIsTruncated(t *testing.T) {
	r := newRig(t, fstest.NewMemFS("/w"), "/w")
	reg, err := tools.NewRegistry(files.Tools(files.Config{DiffText: 100, DiffLines: 5})...)
	require.NoError(t, err)
	r.reg = reg
	r.put("/w/big.txt", strings.Repeat("same line\n", 50)+"old\n"+strings.Repeat("same line\n", 50))
	r.ok("read", map[string]any{"file_path": "/w/big.txt"})
	res := r.ok("edit", map[string]any{"file_path": "/w/big.txt", "old_string": "old", "new_string": "new"})
	d := res.Render.Diff
	assert.True(t, d.Truncated)
	assert.Nil(t, d.OldText)
	assert.Empty(t, d.NewText)
	assert.Empty(t, d.Hunks, "the one hunk has 8 lines, over the limit of 5")
	assert.Equal(t, 1, d.Added)
	assert.Equal(t, 1, d.Removed)
}

func TestLedgerPerSession(t *testing.T) {
	mem := fstest.NewMemFS("/project")
	a := newRig(t, mem, "/project")
	b := newRig(t, mem, "/project")
	a.put("/project/x.txt", "x\n")
	a.ok("read", map[string]any{"file_path": "x.txt"})
	a.ok("edit", map[string]any{"file_path": "x.txt", "old_string": "x", "new_string": "y"})
	b.fails("edit", map[string]any{"file_path": "x.txt", "old_string": "y", "new_string": "z"}, harness.CodeNotObserved)
	assert.Same(t, a.env.Ledger(), a.env.Ledger())
	assert.NotSame(t, a.env.Ledger(), b.env.Ledger())
	assert.Nil(t, (&tools.Env{}).Ledger())
}

func TestNoFileSystem(t *testing.T) {
	r := memRig(t)
	r.env.FS = nil
	msg := r.fails("read", map[string]any{"file_path": "a"}, harness.CodeToolFailed)
	assert.Contains(t, msg, "no file system")
}

// TestConcurrentReadEditLoops runs 8 sessions, each reading and editing
// one shared file in a loop: every edit that succeeded is in the final
// content.
func TestConcurrentReadEditLoops(t *testing.T) {
	mem := fstest.NewMemFS("/project")
	seed := newRig(t, mem, "/project")
	seed.put("/project/log.txt", "BEGIN\nEND\n")
	const workers, rounds = 8, 10
	var mu sync.Mutex
	var done []string
	var wg sync.WaitGroup
	for g := range workers {
		r := newRig(t, mem, "/project")
		wg.Go(func() {
			for i := range rounds {
				if res := r.call("read", map[string]any{"file_path": "log.txt"}); res.IsError {
					t.Errorf("read: %s", res.Text())
					return
				}
				marker := fmt.Sprintf("w%d-%d", g, i)
				res := r.call("edit", map[string]any{"file_path": "log.txt", "old_string": "END\n", "new_string": marker + "\nEND\n"})
				switch {
				case !res.IsError:
					mu.Lock()
					done = append(done, marker)
					mu.Unlock()
				case res.Code != harness.CodeStale:
					t.Errorf("edit: %s", res.Text())
					return
				}
			}
		})
	}
	wg.Wait()
	final := seed.content("/project/log.txt")
	require.NotEmpty(t, done)
	for _, m := range done {
		assert.Equal(t, 1, strings.Count(final, m+"\n"), m)
	}
	assert.Equal(t, len(done)+2, bytes.Count([]byte(final), []byte("\n")))
}

func TestCancelled(t *testing.T) {
	r := memRig(t)
	r.put("/project/a.txt", "a\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &tools.Call{ID: "x", Name: "read", Arguments: `{"file_path":"a.txt"}`, Env: r.env}
	require.Nil(t, r.reg.Check(c))
	res := toolexec.Executor()(ctx, c)
	assert.True(t, res.IsError)
	assert.Equal(t, harness.CodeAborted, res.Code)
	assert.Contains(t, res.Text(), "cancelled")
}
