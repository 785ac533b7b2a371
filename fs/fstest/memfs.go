package fstest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	iofs "io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// MemFS is an in-memory fs.FileSystem for tests, as NewMemFS returns it.
// It behaves as fslocal does (same codes, same windows, same edit
// semantics, atomic writes, versions that catch any content change)
// without touching the disk. It has no symbolic links. It is safe for
// concurrent use.
//
// Beside the contract of package fs, whose methods are specified there
// (with the optional capabilities fs.Rooter, fs.Opener and fs.DirOpener,
// whose views share the file system's files), it has what a test needs to
// arrange files behind a tool's back.
type MemFS interface {
	fs.FileSystem
	fs.Rooter
	fs.Opener
	fs.DirOpener

	// SetFile stores data at p with permission bits perm, creating
	// missing parent directories, whatever is there already (a directory
	// excepted). A file without the owner's write bit refuses writes and
	// edits, one without the read bit refuses reads, with
	// harness.CodePermission.
	SetFile(p string, data []byte, perm iofs.FileMode) error
	// Mkdir creates the directory p and any missing parents.
	Mkdir(p string) error
	// Remove deletes the file or empty directory p.
	Remove(p string) error
}

// memFS implements MemFS.
type memFS struct {
	root string
	now  func() time.Time

	mu    sync.RWMutex
	nodes map[string]*node
}

type node struct {
	dir  bool
	data []byte
	mode iofs.FileMode
	mod  time.Time
}

// NewMemFS returns an empty file system whose namespace root is root (an
// absolute slash path; "" means "/"). Paths outside root are refused with
// harness.CodeOutsideRoot.
func NewMemFS(root string) MemFS {
	if root == "" {
		root = "/"
	}
	root = path.Clean("/" + root)
	m := &memFS{root: root, now: time.Now, nodes: map[string]*node{}}
	m.nodes[root] = &node{dir: true, mode: iofs.ModeDir | 0o755, mod: m.now()}
	return m
}

// Root implements fs.Rooter.
func (m *memFS) Root() string { return m.root }

// SetFile implements MemFS.
func (m *memFS) SetFile(p string, data []byte, perm iofs.FileMode) error {
	p, err := m.check("write", p)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.mkdirs("write", path.Dir(p)); err != nil {
		return err
	}
	if n := m.nodes[p]; n != nil && n.dir {
		return fs.NewError(harness.CodeNotRegular, &fs.PathError{Op: "write", Path: p, Detail: "is a directory"})
	}
	m.nodes[p] = &node{data: bytes.Clone(data), mode: perm.Perm(), mod: m.now()}
	return nil
}

// Mkdir implements MemFS.
func (m *memFS) Mkdir(p string) error {
	p, err := m.check("mkdir", p)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mkdirs("mkdir", p)
}

// Remove implements MemFS.
func (m *memFS) Remove(p string) error {
	p, err := m.check("remove", p)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("remove", p)
	if err != nil {
		return err
	}
	if n.dir {
		if p == m.root {
			return fs.NewError(harness.CodePermission, &fs.PathError{Op: "remove", Path: p, Detail: "cannot remove the root"})
		}
		if len(m.children(p)) > 0 {
			return fs.NewError(harness.CodeIO, &fs.PathError{Op: "remove", Path: p, Detail: "directory not empty"})
		}
	}
	delete(m.nodes, p)
	return nil
}

func version(data []byte) string {
	sum := sha256.Sum256(data)
	return "m" + hex.EncodeToString(sum[:12])
}

// begin is check for an operation that starts: it also fails when ctx
// is done.
func (m *memFS) begin(ctx context.Context, op, p string) (string, error) {
	p, err := m.check(op, p)
	if err != nil {
		return "", err
	}
	if err := fsimpl.Aborted(ctx, op, p); err != nil {
		return "", err
	}
	return p, nil
}

func (m *memFS) check(op, p string) (string, error) {
	p, err := fsimpl.CleanPath(op, p)
	if err != nil {
		return "", err
	}
	if _, ok := fsimpl.Within(m.root, p); !ok {
		return "", fs.NewError(harness.CodeOutsideRoot, &fs.PathError{Op: op, Path: p, Detail: "the path is outside " + m.root})
	}
	return p, nil
}

// lookup finds p, checking that every parent is a directory. The caller
// holds m.mu.
func (m *memFS) lookup(op, p string) (*node, error) {
	if n := m.nodes[p]; n != nil {
		return n, nil
	}
	if err := m.parents(op, p); err != nil {
		return nil, err
	}
	return nil, fs.NewError(harness.CodeNotFound, &fs.PathError{Op: op, Path: p, Err: iofs.ErrNotExist})
}

// parents checks the ancestors of p below the root: the nearest existing
// one must be a directory.
func (m *memFS) parents(op, p string) error {
	for d := path.Dir(p); ; d = path.Dir(d) {
		if n := m.nodes[d]; n != nil {
			if !n.dir {
				return fs.NewError(harness.CodeNotDir, &fs.PathError{Op: op, Path: d, Detail: "a parent is a file"})
			}
			return nil
		}
		if d == m.root || d == "/" {
			return nil
		}
	}
}

func (m *memFS) mkdirs(op, dir string) error {
	if n := m.nodes[dir]; n != nil {
		if !n.dir {
			return fs.NewError(harness.CodeNotDir, &fs.PathError{Op: op, Path: dir, Detail: "a parent is a file"})
		}
		return nil
	}
	if err := m.mkdirs(op, path.Dir(dir)); err != nil {
		return err
	}
	m.nodes[dir] = &node{dir: true, mode: iofs.ModeDir | 0o755, mod: m.now()}
	return nil
}

func (m *memFS) children(dir string) []string {
	var out []string
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	for p := range m.nodes {
		if p != dir && strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (n *node) info(p string) fs.FileInfo {
	fi := fs.FileInfo{Path: p, Mode: n.mode, ModTime: n.mod}
	if !n.dir {
		fi.Size = int64(len(n.data))
		fi.Version = version(n.data)
	}
	return fi
}

// file returns the regular file at p, readable (or writable).
func (m *memFS) file(op, p string, write bool) (*node, error) {
	n, err := m.lookup(op, p)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, fs.NewError(harness.CodeNotRegular, &fs.PathError{Op: op, Path: p, Detail: "is a directory"})
	}
	if (write && n.mode&0o200 == 0) || (!write && n.mode&0o400 == 0) {
		return nil, fs.NewError(harness.CodePermission, &fs.PathError{Op: op, Path: p, Err: iofs.ErrPermission})
	}
	return n, nil
}

// Stat implements fs.FileSystem.
func (m *memFS) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	p, err := m.begin(ctx, "stat", p)
	if err != nil {
		return fs.FileInfo{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("stat", p)
	if err != nil {
		return fs.FileInfo{}, err
	}
	return n.info(p), nil
}

// snapshot returns the content of the readable regular file at p.
func (m *memFS) snapshot(ctx context.Context, op, p string) ([]byte, fs.FileInfo, error) {
	p, err := m.begin(ctx, op, p)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.file(op, p, false)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	// Stored data is never modified in place, so sharing it is safe.
	return n.data, n.info(p), nil
}

// ReadText implements fs.FileSystem.
func (m *memFS) ReadText(ctx context.Context, p string, w fs.Window) (*fs.Text, error) {
	data, info, err := m.snapshot(ctx, "read", p)
	if err != nil {
		return nil, err
	}
	t, err := fs.ScanText(ctx, bytes.NewReader(data), w)
	if err != nil {
		return nil, fsimpl.WithPath(err, info.Path)
	}
	t.Info = info
	return t, nil
}

// ReadBytes implements fs.FileSystem.
func (m *memFS) ReadBytes(ctx context.Context, p string, maxBytes int64) ([]byte, fs.FileInfo, error) {
	data, info, err := m.snapshot(ctx, "read", p)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	if int64(len(data)) > maxBytes {
		return nil, fs.FileInfo{}, fs.NewError(harness.CodeTooLarge, &fs.PathError{Op: "read", Path: info.Path, Total: int64(len(data)), Limit: maxBytes})
	}
	return bytes.Clone(data), info, nil
}

// Open implements fs.Opener.
func (m *memFS) Open(ctx context.Context, p string) (io.ReadCloser, fs.FileInfo, error) {
	data, info, err := m.snapshot(ctx, "open", p)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	return io.NopCloser(bytes.NewReader(data)), info, nil
}

// checkPre checks a precondition against the node at p (nil if absent).
func checkPre(op, p string, n *node, pre fs.Precondition) error {
	switch {
	case pre.Absent && n != nil:
		return fs.NewError(harness.CodeExists, &fs.PathError{Op: op, Path: p, Err: iofs.ErrExist})
	case pre.Version != "" && n == nil:
		return fs.NewError(harness.CodeStale, &fs.PathError{Op: op, Path: p, Detail: "the file no longer exists", Err: iofs.ErrNotExist})
	case pre.Version != "" && version(n.data) != pre.Version:
		return fs.NewError(harness.CodeStale, &fs.PathError{Op: op, Path: p, Detail: "the file changed since that version"})
	}
	return nil
}

// Write implements fs.FileSystem.
func (m *memFS) Write(ctx context.Context, p string, data []byte, opts fs.WriteOptions) (*fs.WriteResult, error) {
	p, err := m.begin(ctx, "write", p)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("write", p)
	if err != nil && !errors.Is(err, harness.CodeNotFound) {
		return nil, err
	}
	if n != nil {
		if _, err := m.file("write", p, true); err != nil {
			return nil, err
		}
	}
	if err := checkPre("write", p, n, opts.Pre); err != nil {
		return nil, err
	}
	res := &fs.WriteResult{Created: n == nil}
	mode := iofs.FileMode(0o644)
	if n != nil {
		res.PreviousSize = int64(len(n.data))
		if len(n.data) <= fsimpl.MaxPrevious {
			res.Previous = n.data
		}
		if opts.KeepStyle {
			data = fsimpl.MatchStyle(n.data, data)
		}
		mode = n.mode
		if bytes.Equal(n.data, data) {
			res.Unchanged = true
			res.Written = n.data
			res.Info = n.info(p)
			return res, nil
		}
	} else if err := m.mkdirs("write", path.Dir(p)); err != nil {
		return nil, err
	}
	stored := &node{data: bytes.Clone(data), mode: mode, mod: m.now()}
	m.nodes[p] = stored
	res.Written = stored.data
	res.Info = stored.info(p)
	return res, nil
}

// Edit implements fs.FileSystem.
func (m *memFS) Edit(ctx context.Context, p string, e fs.Edit, pre fs.Precondition) (*fs.EditResult, error) {
	p, err := m.begin(ctx, "edit", p)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.file("edit", p, true)
	if err != nil {
		return nil, err
	}
	if pre.Absent {
		return nil, fs.NewError(harness.CodeExists, &fs.PathError{Op: "edit", Path: p, Err: iofs.ErrExist})
	}
	if err := checkPre("edit", p, n, pre); err != nil {
		return nil, err
	}
	if len(n.data) > fsimpl.MaxEditSize {
		return nil, fs.NewError(harness.CodeTooLarge, &fs.PathError{Op: "edit", Path: p, Total: int64(len(n.data)), Limit: fsimpl.MaxEditSize})
	}
	out, spans, err := fs.ApplyEdit(n.data, e)
	if err != nil {
		return nil, fsimpl.WithPath(err, p)
	}
	stored := &node{data: out, mode: n.mode, mod: m.now()}
	m.nodes[p] = stored
	return &fs.EditResult{Info: stored.info(p), Replacements: len(spans), Old: n.data, New: out, Spans: spans}, nil
}

// ReadDir implements fs.FileSystem.
func (m *memFS) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	p, err := m.begin(ctx, "readdir", p)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, err := m.lookup("readdir", p)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, fs.NewError(harness.CodeNotDir, &fs.PathError{Op: "readdir", Path: p, Detail: "is a file"})
	}
	var out []fs.FileInfo
	for _, c := range m.children(p) {
		fi := m.nodes[c].info(c)
		fi.Version = ""
		out = append(out, fi)
	}
	return out, nil
}

var (
	_ MemFS        = (*memFS)(nil)
	_ fs.DirOpener = (*memView)(nil)
	_ fs.Opener    = (*memView)(nil)
)

// OpenDir implements fs.DirOpener: the view shares m's files and accepts
// only paths at or below dir.
func (m *memFS) OpenDir(ctx context.Context, dir string) (fs.FileSystem, error) {
	p, err := m.begin(ctx, "opendir", dir)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	n, err := m.lookup("opendir", p)
	m.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, fs.NewError(harness.CodeNotDir, &fs.PathError{Op: "opendir", Path: p, Detail: "is a file"})
	}
	return &memView{m: m, dir: p}, nil
}

// memView is a memFS confined to a directory.
type memView struct {
	m   *memFS
	dir string
}

func (v *memView) in(op, p string) error {
	c, err := fsimpl.CleanPath(op, p)
	if err != nil {
		return err
	}
	if _, ok := fsimpl.Within(v.dir, c); !ok {
		return fs.NewError(harness.CodeOutsideRoot, &fs.PathError{Op: op, Path: c, Detail: "the path is outside " + v.dir})
	}
	return nil
}

func (v *memView) Root() string { return v.dir }

func (v *memView) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	if err := v.in("stat", p); err != nil {
		return fs.FileInfo{}, err
	}
	return v.m.Stat(ctx, p)
}

func (v *memView) ReadText(ctx context.Context, p string, w fs.Window) (*fs.Text, error) {
	if err := v.in("read", p); err != nil {
		return nil, err
	}
	return v.m.ReadText(ctx, p, w)
}

func (v *memView) ReadBytes(ctx context.Context, p string, maxBytes int64) ([]byte, fs.FileInfo, error) {
	if err := v.in("read", p); err != nil {
		return nil, fs.FileInfo{}, err
	}
	return v.m.ReadBytes(ctx, p, maxBytes)
}

func (v *memView) Open(ctx context.Context, p string) (io.ReadCloser, fs.FileInfo, error) {
	if err := v.in("open", p); err != nil {
		return nil, fs.FileInfo{}, err
	}
	return v.m.Open(ctx, p)
}

func (v *memView) Write(ctx context.Context, p string, data []byte, opts fs.WriteOptions) (*fs.WriteResult, error) {
	if err := v.in("write", p); err != nil {
		return nil, err
	}
	return v.m.Write(ctx, p, data, opts)
}

func (v *memView) Edit(ctx context.Context, p string, e fs.Edit, pre fs.Precondition) (*fs.EditResult, error) {
	if err := v.in("edit", p); err != nil {
		return nil, err
	}
	return v.m.Edit(ctx, p, e, pre)
}

func (v *memView) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	if err := v.in("readdir", p); err != nil {
		return nil, err
	}
	return v.m.ReadDir(ctx, p)
}

func (v *memView) OpenDir(ctx context.Context, dir string) (fs.FileSystem, error) {
	if err := v.in("opendir", dir); err != nil {
		return nil, err
	}
	return v.m.OpenDir(ctx, dir)
}
