package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/tools"
)

// opener lends an io/fs.FS to f for the time of the call: an OS
// directory is opened (confined with os.Root) and closed around it.
type opener func(f func(iofs.FS) error) error

func embeddedOpener(fsys iofs.FS) opener {
	return func(f func(iofs.FS) error) error { return f(fsys) }
}

// osOpener opens an OS directory confined to itself: no path leaves it,
// through .. or a symbolic link.
func osOpener(dir string) opener {
	return func(f func(iofs.FS) error) error {
		root, err := os.OpenRoot(dir)
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				return nil
			}
			return f(errFS{err})
		}
		defer root.Close()
		return f(root.FS())
	}
}

// workspaceOpener views a directory of the session's file system, so
// that its path policy applies.
func workspaceOpener(ctx context.Context, fsys fs.FileSystem, dir string) opener {
	return func(f func(iofs.FS) error) error { return f(fs.IOFS(ctx, fsys, dir)) }
}

// errFS fails every operation with err.
type errFS struct{ err error }

func (e errFS) Open(string) (iofs.File, error) { return nil, e.err }

var errIsDir = errors.New("is a directory")

// readCapped reads a regular file of at most max bytes.
func readCapped(fsys iofs.FS, name string, max int64) ([]byte, error) {
	fi, err := iofs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, errIsDir
	case !fi.Mode().IsRegular():
		return nil, &harness.Error{Code: harness.CodeNotRegular, Message: name + " is not a regular file"}
	case fi.Size() > max:
		return nil, &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf("%s has %d bytes; a skill's files may have at most %d", name, fi.Size(), max)}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf("%s has more than %d bytes; a skill's files may have at most that", name, max)}
	}
	return data, nil
}

// folder is the folder of a user or embedded skill.
type folder struct {
	open opener
	dir  string // the folder's path in the FS open lends
	max  int64
}

// view is a read-only fs.FileSystem of a skill's folder, its root "/",
// for the read tool to read skill:// locators with.
type view struct {
	f *folder
}

func (v *view) rel(p string) (string, error) {
	clean := path.Clean("/" + strings.TrimPrefix(p, "/"))
	if clean == "/" {
		return v.f.dir, nil
	}
	return path.Join(v.f.dir, clean[1:]), nil
}

func (v *view) fail(op, p string, err error) error {
	code := harness.CodeOf(err)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		code = harness.CodeNotFound
	case errors.Is(err, errIsDir):
		code = harness.CodeNotRegular
	case code == harness.CodeUnknown:
		code = harness.CodeIO
	}
	return fs.NewError(code, &fs.PathError{Op: op, Path: p, Err: err})
}

func (v *view) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	name, _ := v.rel(p)
	var out fs.FileInfo
	err := v.f.open(func(fsys iofs.FS) error {
		fi, err := iofs.Stat(fsys, name)
		if err != nil {
			return err
		}
		out = fs.FileInfo{Path: path.Clean(p), Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
		return nil
	})
	if err != nil {
		return fs.FileInfo{}, v.fail("stat", p, err)
	}
	return out, nil
}

func (v *view) ReadText(ctx context.Context, p string, w fs.Window) (*fs.Text, error) {
	data, info, err := v.ReadBytes(ctx, p, v.f.max)
	if err != nil {
		return nil, err
	}
	t, err := fs.ScanText(ctx, strings.NewReader(string(data)), w)
	if err != nil {
		var he *harness.Error
		if errors.As(err, &he) {
			return nil, fs.NewError(he.Code, &fs.PathError{Op: "read", Path: p, Err: err})
		}
		return nil, err
	}
	t.Info = info
	return t, nil
}

func (v *view) ReadBytes(ctx context.Context, p string, maxBytes int64) ([]byte, fs.FileInfo, error) {
	name, _ := v.rel(p)
	var data []byte
	err := v.f.open(func(fsys iofs.FS) error {
		var err error
		data, err = readCapped(fsys, name, min(maxBytes, v.f.max))
		return err
	})
	if err != nil {
		return nil, fs.FileInfo{}, v.fail("read", p, err)
	}
	return data, fs.FileInfo{Path: path.Clean(p), Size: int64(len(data))}, nil
}

func (v *view) Write(ctx context.Context, p string, data []byte, opts fs.WriteOptions) (*fs.WriteResult, error) {
	return nil, v.readOnly("write", p)
}

func (v *view) Edit(ctx context.Context, p string, e fs.Edit, pre fs.Precondition) (*fs.EditResult, error) {
	return nil, v.readOnly("edit", p)
}

func (v *view) readOnly(op, p string) error {
	return fs.NewError(harness.CodeDenied, &fs.PathError{Op: op, Path: p, Err: errors.New("a skill's files are read-only")})
}

func (v *view) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	name, _ := v.rel(p)
	var out []fs.FileInfo
	err := v.f.open(func(fsys iofs.FS) error {
		entries, err := iofs.ReadDir(fsys, name)
		if err != nil {
			return err
		}
		for _, e := range entries {
			fi := fs.FileInfo{Path: path.Join(path.Clean(p), e.Name()), Mode: e.Type()}
			if info, err := e.Info(); err == nil {
				fi.Size, fi.ModTime = info.Size(), info.ModTime()
			}
			out = append(out, fi)
		}
		return nil
	})
	if err != nil {
		return nil, v.fail("readdir", p, err)
	}
	return out, nil
}

// readTool is the name of the read tool the Middleware serves
// skill:// locators for.
const readTool = "read"

// Middleware lets the read tool read the files of user and embedded
// skills: a read call whose file_path is skill://<name>/<path> reads
// <path> in that skill's folder, with the read tool's windowing and
// output, the locator standing for the path. Other calls pass through.
// Workspace skills need none of it: their files are read where they
// are. Put it in agent.Hooks.Tools.
func (c *Catalog) Middleware() tools.Middleware {
	return func(next tools.Handler) tools.Handler {
		return func(ctx context.Context, call *tools.Call) *harness.ToolResult {
			if call.Name != readTool {
				return next(ctx, call)
			}
			var args map[string]json.RawMessage
			if json.Unmarshal([]byte(call.Arguments), &args) != nil {
				return next(ctx, call)
			}
			var locator string
			if json.Unmarshal(args["file_path"], &locator) != nil || !strings.HasPrefix(locator, Scheme) {
				return next(ctx, call)
			}
			name, rel, _ := strings.Cut(strings.TrimPrefix(locator, Scheme), "/")
			rel = strings.TrimPrefix(path.Clean("/"+rel), "/")
			var sk *Skill
			if call.Env != nil {
				sk = c.Find(ctx, call.Env.FS, call.Env.Cwd).Lookup(name)
			} else {
				sk = c.Find(ctx, nil, "").Lookup(name)
			}
			switch {
			case sk == nil:
				return harness.ErrorResult(harness.CodeNotFound, "There is no skill %q whose files are read through %s. The skills are listed in the system prompt; load one with the skill tool to learn where its files are.", name, Scheme)
			case sk.files == nil:
				return harness.ErrorResult(harness.CodeNotFound, "The skill %q is in the workspace: read its files where they are, below %s.", name, sk.Dir)
			case rel == "":
				return harness.ErrorResult(harness.CodeInvalidArguments, "%s names the skill's folder, not a file: add the file's path, such as %s%s/SKILL.md.", locator, Scheme, name)
			}
			args["file_path"], _ = json.Marshal("/" + rel)
			raw, err := json.Marshal(args)
			if err != nil {
				return harness.ErrorResult(harness.CodeInvalidArguments, "The arguments of this read call could not be encoded again: %v.", err)
			}
			env := tools.Env{}
			if call.Env != nil {
				env = *call.Env
			}
			env.FS, env.Cwd, env.State = &view{f: sk.files}, "/", nil
			inner, res := recheck(call, string(raw), &env)
			if res != nil {
				return res
			}
			res = next(ctx, inner)
			return relocate(res, "/"+rel, Scheme+name+"/"+rel)
		}
	}
}

// recheck returns a copy of call with new arguments and environment.
// The registry decoded the old arguments once and every later reader
// (the read tool's adapter, guards) takes that value (tools.Call.Args),
// so a checked call is checked again, by a registry of its own tool,
// for the copy to carry the new arguments decoded; a result means the
// new arguments do not fit the tool.
func recheck(call *tools.Call, args string, env *tools.Env) (*tools.Call, *harness.ToolResult) {
	t := call.Tool()
	if t == nil {
		inner := *call // not checked: nothing decoded to go stale
		inner.Arguments, inner.Env = args, env
		return &inner, nil
	}
	inner := &tools.Call{ID: call.ID, Name: call.Name, Arguments: args, Step: call.Step, Index: call.Index, Env: env, OnProgress: call.OnProgress}
	reg, err := tools.NewRegistry(t)
	if err != nil {
		return nil, harness.ErrorResult(harness.CodeInvalidArguments, "The read call on a skill's file could not be checked again: %v.", err)
	}
	if res := reg.Check(inner); res != nil {
		return nil, res
	}
	return inner, nil
}

// relocate rewrites a read result's path to the locator the model gave.
func relocate(res *harness.ToolResult, p, locator string) *harness.ToolResult {
	if res == nil {
		return res
	}
	out := *res
	out.Content = append([]harness.Block(nil), res.Content...)
	for i, b := range out.Content {
		if b.Type != harness.BlockText {
			continue
		}
		if res.IsError {
			out.Content[i].Text = strings.ReplaceAll(b.Text, p, locator)
		} else if rest, ok := strings.CutPrefix(b.Text, "File: "+p+"\n"); ok {
			out.Content[i].Text = "File: " + locator + "\n" + rest
		}
	}
	if res.Render != nil {
		r := *res.Render
		r.Title = strings.ReplaceAll(r.Title, p, locator)
		r.Locations = nil
		for _, l := range res.Render.Locations {
			if l.Path == p {
				l.Path = locator
			}
			r.Locations = append(r.Locations, l)
		}
		out.Render = &r
	}
	out.Files = nil // not a file of the workspace: nothing to prune or announce
	return &out
}
