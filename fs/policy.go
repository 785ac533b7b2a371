package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"path"
	"strings"

	"github.com/go-harness/harness"
)

// Access is what a caller wants of a path, for a [PathPolicy]. The bits
// combine.
type Access uint8

const (
	// AccessRead is reading a file's content, listing a directory, or
	// learning that the path exists at all.
	AccessRead Access = 1 << iota
	// AccessWrite is creating, replacing or editing a file. A write also
	// shows the content it replaces, so [Restrict] checks AccessRead
	// beside it.
	AccessWrite
	// AccessListed marks a path nobody named: one found by listing a
	// directory or walking a tree, or one a sandbox must decide on before
	// a command runs. Nobody can be asked about such a path, so a policy
	// that would ask before the path is used denies it instead.
	AccessListed
)

// FileID identifies a file on its device: what every hard link to the
// file shares. The zero value means unknown.
type FileID struct {
	Dev, Ino uint64
	// Links is the file's number of hard links: a file with more than
	// one can be reached under another name too.
	Links uint64
	// Changed is the file's status change time in Unix nanoseconds (0
	// when unknown): making or renaming a link of the file moves it, so
	// a policy that found the file's names at a later time need not look
	// again.
	Changed int64
}

// PathPolicy decides which paths of a file system's namespace may be read
// or changed, below every tool that touches files ([Restrict] applies
// it to a FileSystem). Package tools/permission derives one from its
// Read and Edit rules.
//
// Implementations must be safe for concurrent use and quick: a tree walk
// asks once per entry.
type PathPolicy interface {
	// CheckPath returns nil when access a to the clean absolute namespace
	// path p is allowed, and otherwise an error that says what denies it
	// (a refused change shows its text; a refused read is reported as "not
	// found" and shows nothing). A denial of a directory covers everything
	// below it. id identifies the file at p when the caller has it (a file
	// system that opened the file) and is zero otherwise: a policy denies
	// a file with more than one hard link when it denies another of the
	// file's names.
	CheckPath(ctx context.Context, p string, a Access, id FileID) error
}

// PolicyEnforcer is implemented by file systems with symbolic or hard
// links (fslocal) that can apply a PathPolicy where they touch files: to
// the path the operating system resolved, with the file's identity, at
// the moment the file is opened, so that a link swapped in after a check
// is caught. [Restrict] uses it when the file system has it.
type PolicyEnforcer interface {
	// WithPathPolicy returns a view of the file system (same namespace,
	// same files) that checks every path it opens, lists, creates or
	// replaces against p, with symbolic links resolved, and leaves out of
	// ReadDir the entries p denies. A denied operation fails with
	// harness.CodeDenied and the policy's error as cause. Closing the view
	// leaves the file system open.
	WithPathPolicy(p PathPolicy) FileSystem
}

// Restrict returns fsys restricted by p, so that every tool working
// through it (and any host tool using the session's file system) obeys
// the same path rules without cooperating:
//
//   - A path p denies for reading is invisible: Stat, ReadText, ReadBytes,
//     Open, ReadDir and OpenDir fail with harness.CodeNotFound exactly as
//     for a path that does not exist, ReadDir leaves it out, and a
//     directory it denies hides everything below it.
//   - A path p denies for writing, or for reading, cannot be written or
//     edited: Write and Edit fail with harness.CodeDenied, whose message
//     says what denies it.
//   - Paths are checked as given and, when fsys implements
//     [PolicyEnforcer], as the operating system resolves them, symbolic
//     links followed and hard links found, at the moment each file is
//     opened.
//
// Every "not found" the restricted file system reports reads the same,
// whether the path is absent or denied. The result implements [Rooter],
// [Opener], [DirOpener] and io.Closer (closing a view made by OpenDir
// closes it; closing the restricted file system itself leaves fsys open,
// since fsys belongs to whoever made it), [LocalPather] when fsys does,
// and reports p through [PolicyOf].
func Restrict(fsys FileSystem, p PathPolicy) FileSystem {
	r := &restricted{outer: fsys, inner: fsys, pol: p}
	if e, ok := fsys.(PolicyEnforcer); ok {
		r.inner = e.WithPathPolicy(p)
		r.enforced = true
	}
	if lp, ok := r.inner.(LocalPather); ok {
		return &restrictedLocal{restricted: r, lp: lp}
	}
	return r
}

// PolicyOf returns the path policy a file system made by [Restrict]
// obeys, or nil for any other file system. Tools that reach files some
// other way (session logs, saved outputs) use it to obey the same rules.
func PolicyOf(fsys FileSystem) PathPolicy {
	if r, ok := fsys.(interface{ pathPolicy() PathPolicy }); ok {
		return r.pathPolicy()
	}
	return nil
}

// restricted implements Restrict.
type restricted struct {
	outer    FileSystem // as given: what Close and capabilities refer to
	inner    FileSystem // the enforcing view, or outer
	pol      PathPolicy
	enforced bool
	// view: inner is a view OpenDir made, so Close closes it.
	view bool
	// dir, when set, confines the paths accepted to a directory: a view
	// OpenDir made over a file system that has none of its own.
	dir string
}

// restrictedLocal adds fs.LocalPather when the file system has it.
type restrictedLocal struct {
	*restricted
	lp LocalPather
}

func (r *restricted) pathPolicy() PathPolicy { return r.pol }

// target cleans p for a check; ok is false for a path the file system
// must refuse itself (relative, empty, with a NUL byte).
func target(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
		return "", false
	}
	return path.Clean(p), true
}

// notFound is the one "not found" the restricted file system reports, for
// a denied path and an absent one alike.
func notFound(op, p string) error {
	return NewError(harness.CodeNotFound, &PathError{Op: op, Path: p, Err: iofs.ErrNotExist})
}

// denied is the error of a refused change.
func denied(op, p string, why error) error {
	return NewError(harness.CodeDenied, &PathError{Op: op, Path: p, Err: why})
}

// readable checks a path to be read; it returns the clean path, and
// notFound when the policy denies it.
func (r *restricted) readable(ctx context.Context, op, p string) (string, error) {
	clean, ok := target(p)
	if !ok {
		return p, nil
	}
	if err := r.confined(op, clean); err != nil {
		return "", err
	}
	if r.pol.CheckPath(ctx, clean, AccessRead, FileID{}) != nil {
		return "", notFound(op, clean)
	}
	return clean, nil
}

// confined refuses a path outside the directory of an emulated view.
func (r *restricted) confined(op, clean string) error {
	if r.dir == "" || r.dir == "/" || clean == r.dir || strings.HasPrefix(clean, r.dir+"/") {
		return nil
	}
	return NewError(harness.CodeOutsideRoot, &PathError{Op: op, Path: clean, Detail: "the path is outside " + r.dir})
}

// writable checks a path to be written: neither reading nor writing it
// may be denied.
func (r *restricted) writable(ctx context.Context, op, p string) error {
	clean, ok := target(p)
	if !ok {
		return nil
	}
	if err := r.confined(op, clean); err != nil {
		return err
	}
	for _, a := range []Access{AccessWrite, AccessRead} {
		if err := r.pol.CheckPath(ctx, clean, a, FileID{}); err != nil {
			return denied(op, clean, err)
		}
	}
	return nil
}

// readErr maps the error of a read: a denial, or any "not found", is the
// canonical not found, so that the two cannot be told apart.
func readErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, harness.CodeDenied) || errors.Is(err, harness.CodeNotFound) {
		if clean, ok := target(p); ok {
			p = clean
		}
		return notFound(op, p)
	}
	return err
}

// Stat implements FileSystem.
func (r *restricted) Stat(ctx context.Context, p string) (FileInfo, error) {
	if _, err := r.readable(ctx, "stat", p); err != nil {
		return FileInfo{}, err
	}
	fi, err := r.inner.Stat(ctx, p)
	return fi, readErr("stat", p, err)
}

// ReadText implements FileSystem.
func (r *restricted) ReadText(ctx context.Context, p string, w Window) (*Text, error) {
	if _, err := r.readable(ctx, "read", p); err != nil {
		return nil, err
	}
	t, err := r.inner.ReadText(ctx, p, w)
	return t, readErr("read", p, err)
}

// ReadBytes implements FileSystem.
func (r *restricted) ReadBytes(ctx context.Context, p string, maxBytes int64) ([]byte, FileInfo, error) {
	if _, err := r.readable(ctx, "read", p); err != nil {
		return nil, FileInfo{}, err
	}
	b, fi, err := r.inner.ReadBytes(ctx, p, maxBytes)
	return b, fi, readErr("read", p, err)
}

// Write implements FileSystem.
func (r *restricted) Write(ctx context.Context, p string, data []byte, opts WriteOptions) (*WriteResult, error) {
	if err := r.writable(ctx, "write", p); err != nil {
		return nil, err
	}
	return r.inner.Write(ctx, p, data, opts)
}

// Edit implements FileSystem.
func (r *restricted) Edit(ctx context.Context, p string, e Edit, pre Precondition) (*EditResult, error) {
	if err := r.writable(ctx, "edit", p); err != nil {
		return nil, err
	}
	res, err := r.inner.Edit(ctx, p, e, pre)
	if errors.Is(err, harness.CodeNotFound) {
		err = readErr("edit", p, err)
	}
	return res, err
}

// ReadDir implements FileSystem. Entries the policy denies are left out.
func (r *restricted) ReadDir(ctx context.Context, p string) ([]FileInfo, error) {
	if _, err := r.readable(ctx, "readdir", p); err != nil {
		return nil, err
	}
	list, err := r.inner.ReadDir(ctx, p)
	if err != nil {
		return nil, readErr("readdir", p, err)
	}
	if r.enforced {
		// The enforcing file system left out what the policy denies, by
		// the entries' paths as given and as resolved.
		return list, nil
	}
	out := list[:0]
	for _, fi := range list {
		if r.pol.CheckPath(ctx, fi.Path, AccessRead|AccessListed, FileID{}) == nil {
			out = append(out, fi)
		}
	}
	return out, nil
}

// Root implements Rooter.
func (r *restricted) Root() string {
	if r.dir != "" {
		return r.dir
	}
	if ro, ok := r.outer.(Rooter); ok {
		return ro.Root()
	}
	return ""
}

// Open implements Opener: it streams when the file system can, and reads
// the file whole otherwise.
func (r *restricted) Open(ctx context.Context, p string) (io.ReadCloser, FileInfo, error) {
	if _, err := r.readable(ctx, "open", p); err != nil {
		return nil, FileInfo{}, err
	}
	if o, ok := r.inner.(Opener); ok {
		rc, fi, err := o.Open(ctx, p)
		return rc, fi, readErr("open", p, err)
	}
	b, fi, err := r.inner.ReadBytes(ctx, p, maxEdit)
	if err != nil {
		return nil, FileInfo{}, readErr("open", p, err)
	}
	return io.NopCloser(bytes.NewReader(b)), fi, nil
}

// maxEdit bounds what Open reads whole from a file system that cannot
// stream.
const maxEdit = 64 << 20

// OpenDir implements DirOpener. Over a file system without views of its
// own, the view is the restricted file system confined to dir.
func (r *restricted) OpenDir(ctx context.Context, dir string) (FileSystem, error) {
	clean, err := r.readable(ctx, "opendir", dir)
	if err != nil {
		return nil, err
	}
	o, ok := r.inner.(DirOpener)
	if !ok {
		st, err := r.inner.Stat(ctx, dir)
		switch {
		case err != nil:
			return nil, readErr("opendir", dir, err)
		case !st.Mode.IsDir():
			return nil, NewError(harness.CodeNotDir, &PathError{Op: "opendir", Path: clean, Detail: "is a file"})
		}
		nr := *r
		nr.view, nr.dir = false, clean
		if lr, ok := r.inner.(LocalPather); ok {
			return &restrictedLocal{restricted: &nr, lp: lr}, nil
		}
		return &nr, nil
	}
	v, err := o.OpenDir(ctx, dir)
	if err != nil {
		return nil, readErr("opendir", dir, err)
	}
	// The view of an enforcing file system enforces too.
	nr := &restricted{outer: v, inner: v, pol: r.pol, enforced: r.enforced, view: true}
	if lp, ok := v.(LocalPather); ok {
		return &restrictedLocal{restricted: nr, lp: lp}, nil
	}
	return nr, nil
}

// Close implements io.Closer. A view made by OpenDir closes the view it
// wraps; the restricted file system itself closes nothing, since the file
// system it restricts belongs to whoever made it.
func (r *restricted) Close() error {
	if c, ok := r.inner.(io.Closer); ok && r.view {
		return c.Close()
	}
	return nil
}

// LocalPath implements LocalPather: a path the policy hides has no OS
// path either.
func (r *restrictedLocal) LocalPath(p string) (string, error) {
	ctx := context.Background()
	clean, err := r.readable(ctx, "locate", p)
	if err != nil {
		return "", err
	}
	if _, ok := target(p); !ok {
		return r.lp.LocalPath(p)
	}
	lp, err := r.lp.LocalPath(p)
	if err != nil {
		return "", readErr("locate", p, err)
	}
	if real, ok := target(strings.ReplaceAll(lp, "\\", "/")); ok && real != clean {
		if r.pol.CheckPath(ctx, real, AccessRead, FileID{}) != nil {
			return "", notFound("locate", clean)
		}
	}
	return lp, nil
}

var (
	_ Rooter      = (*restricted)(nil)
	_ Opener      = (*restricted)(nil)
	_ DirOpener   = (*restricted)(nil)
	_ io.Closer   = (*restricted)(nil)
	_ LocalPather = (*restrictedLocal)(nil)
)

// DenyLister is implemented by path policies that can list what they
// deny, for a sandbox that must hide it from programs the policy never
// sees (package tools/shell masks these paths under bubblewrap).
type DenyLister interface {
	// ListDenied returns the existing paths (clean, absolute, symbolic
	// links not followed) that the policy denies for access a when
	// nobody can be asked, outermost only (a denied directory stands for
	// everything in it): a snapshot of what exists now.
	ListDenied(ctx context.Context, a Access) ([]string, error)
}
