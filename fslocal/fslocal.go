package fslocal

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// FS is what New returns: an fs.FileSystem over the OS file system,
// confined to a root directory, with the optional capabilities of package
// fs that this implementation always has. Its namespace is the OS's: the
// path of a file is its absolute OS path (slash-separated), and only paths
// at or below the root are accepted. It is safe for concurrent use.
//
// Every method is specified where it is declared, in package fs; FS only
// names the set:
//   - Close (io.Closer) releases the root directory; later operations fail.
//   - Root (fs.Rooter) returns the root directory as an absolute slash
//     path: the top of the namespace and a good default working directory.
//   - LocalPath (fs.LocalPather) maps a namespace path to the OS path it
//     names, with symbolic links inside the root resolved. It refuses paths
//     that leave the root (lexically or through a symbolic link) with
//     harness.CodeOutsideRoot. A path that does not exist yet is mapped as
//     far as it exists.
//   - Open (fs.Opener) streams a regular file.
//   - OpenDir (fs.DirOpener) returns a view confined to a directory; the
//     view's Close leaves the file system open.
type FS interface {
	fs.FileSystem
	io.Closer
	fs.Rooter
	fs.LocalPather
	fs.Opener
	fs.DirOpener
}

// localFS implements FS.
type localFS struct {
	root  string   // namespace root: clean absolute slash path, as given
	real  string   // root with symbolic links resolved, as an alias
	r     *os.Root // every access goes through it
	locks *locks   // shared with the views OpenDir returns

	// now is the clock versions are judged against.
	now func() time.Time
	// hook, when set by tests, runs at named points of an operation.
	hook func(stage, rel string)

	// pol, when set, is checked at every access (WithPathPolicy).
	pol fs.PathPolicy
	// shared: r belongs to another FS value, so Close leaves it open.
	shared bool
	// dir, in a view (OpenDir), holds the view's directory open once it
	// is listed, for Open's fast path (openByName).
	dir *dirHandle
}

// New returns the file system confined to the directory root. A relative
// root is made absolute against the current directory. The directory stays
// open until Close.
func New(root string) (FS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fs.NewError(harness.CodeInvalidPath, &fs.PathError{Op: "open", Path: root, Err: err})
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, mapErr("open", filepath.ToSlash(abs), err)
	}
	st, err := r.Stat(".")
	if err != nil || !st.IsDir() {
		r.Close()
		if err == nil {
			return nil, fs.NewError(harness.CodeNotDir, &fs.PathError{Op: "open", Path: abs, Detail: "the root is not a directory"})
		}
		return nil, mapErr("open", abs, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	return &localFS{
		root:  filepath.ToSlash(abs),
		real:  filepath.ToSlash(real),
		r:     r,
		locks: &locks{},
		now:   time.Now,
	}, nil
}

// Close implements io.Closer.
func (f *localFS) Close() error {
	if f.shared {
		return nil
	}
	f.dir.close()
	return f.r.Close()
}

// Root implements fs.Rooter.
func (f *localFS) Root() string { return f.root }

// LocalPath implements fs.LocalPather.
func (f *localFS) LocalPath(p string) (string, error) {
	clean, res, err := f.locate("locate", p)
	if err != nil {
		return "", err
	}
	if err := f.guard(context.Background(), "locate", clean, res); err != nil {
		return "", err
	}
	return filepath.FromSlash(f.ns(res)), nil
}

// ns returns the namespace path of a root-relative path.
func (f *localFS) ns(rel string) string {
	if rel == "." {
		return f.root
	}
	if f.root == "/" {
		return "/" + rel
	}
	return f.root + "/" + rel
}

// rel checks p and returns it relative to the root.
func (f *localFS) rel(op, p string) (string, string, error) {
	clean, err := fsimpl.CleanPath(op, p)
	if err != nil {
		return "", "", err
	}
	if rel, ok := fsimpl.Within(f.root, clean); ok {
		return clean, rel, nil
	}
	if rel, ok := fsimpl.Within(f.real, clean); ok {
		return clean, rel, nil
	}
	return "", "", fs.NewError(harness.CodeOutsideRoot, &fs.PathError{Op: op, Path: clean, Detail: "the path is outside " + f.root})
}

// begin is locate for an operation that starts: it also fails when ctx
// is done, and when the path policy (if any) denies the path.
func (f *localFS) begin(ctx context.Context, op, p string) (string, string, error) {
	clean, rel, err := f.locate(op, p)
	if err != nil {
		return "", "", err
	}
	if err := fsimpl.Aborted(ctx, op, clean); err != nil {
		return "", "", err
	}
	if err := f.guard(ctx, op, clean, rel); err != nil {
		return "", "", err
	}
	return clean, rel, nil
}

// locate checks p and resolves the symbolic links on it. It returns the
// clean namespace path and the resolved root-relative path.
func (f *localFS) locate(op, p string) (string, string, error) {
	clean, rel, err := f.rel(op, p)
	if err != nil {
		return "", "", err
	}
	res, err := f.resolve(op, clean, rel)
	if err != nil {
		return "", "", err
	}
	return clean, res, nil
}

// maxLinks bounds the symbolic links followed while resolving one path.
const maxLinks = 40

// resolve follows the symbolic links of rel, component by component,
// through the root, and returns a root-relative path free of links (at
// the time of the check). Links that lead outside the root, by ".." or by
// an absolute target, are refused with harness.CodeOutsideRoot. Once a
// component does not exist, the rest is appended as it is.
//
// The check is for clear errors and for absolute links that point inside
// the root (which os.Root alone refuses). Confinement itself does not rely
// on it: every access afterwards goes through os.Root, which refuses to
// leave the root even if a component is swapped for a link in between.
func (f *localFS) resolve(op, clean, rel string) (string, error) {
	outside := func(detail string) error {
		return fs.NewError(harness.CodeOutsideRoot, &fs.PathError{Op: op, Path: clean, Detail: detail})
	}
	todo := split(rel)
	var done []string
	links := 0
	missing := false
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".", "":
			continue
		case "..":
			if len(done) == 0 {
				return "", outside("a symbolic link leads above the root")
			}
			done = done[:len(done)-1]
			continue
		}
		done = append(done, c)
		if missing {
			continue
		}
		cur := strings.Join(done, "/")
		st, err := f.r.Lstat(cur)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				missing = true
				continue
			}
			return "", mapErr(op, clean, err)
		}
		if st.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if links++; links > maxLinks {
			return "", fs.NewError(harness.CodeInvalidPath, &fs.PathError{Op: op, Path: clean, Detail: "too many levels of symbolic links"})
		}
		target, err := f.r.Readlink(cur)
		if err != nil {
			return "", mapErr(op, clean, err)
		}
		target = filepath.ToSlash(target)
		done = done[:len(done)-1]
		if strings.HasPrefix(target, "/") {
			t := path.Clean(target)
			r, ok := fsimpl.Within(f.root, t)
			if !ok {
				r, ok = fsimpl.Within(f.real, t)
			}
			if !ok {
				return "", outside("a symbolic link points to " + t + ", outside the root")
			}
			done = nil
			target = r
		}
		todo = append(split(target), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

func split(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// locks serializes changes of one path within the process.
type locks struct {
	mu sync.Mutex
	m  map[string]*lockEntry
}

type lockEntry struct {
	ch   chan struct{}
	refs int
}

// lock takes the lock of key, waiting at most until ctx ends.
func (l *locks) lock(ctx context.Context, key string) (func(), error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*lockEntry{}
	}
	e := l.m[key]
	if e == nil {
		e = &lockEntry{ch: make(chan struct{}, 1)}
		l.m[key] = e
	}
	e.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	select {
	case e.ch <- struct{}{}:
		return func() { <-e.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

var _ FS = (*localFS)(nil)
