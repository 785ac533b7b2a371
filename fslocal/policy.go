package fslocal

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// WithPathPolicy implements fs.PolicyEnforcer: the view shares f's root,
// files and locks, and checks every access against p three ways:
//
//   - the path as given and the path with its symbolic links resolved,
//     before anything is opened (so an error never names what a link
//     leads to);
//   - the path the kernel reports for the opened file or directory
//     (/proc/self/fd on Linux), with the file's device, inode and link
//     count, before anything is read: a link swapped in between the two
//     checks is caught, and so is a hard link to a denied file;
//   - for a change, the path of the temporary file the new content is
//     written to, before it is renamed into place.
//
// ReadDir leaves out the entries p denies. A denied access fails with
// harness.CodeDenied, its cause the policy's error. Closing the view
// leaves f open.
func (f *localFS) WithPathPolicy(p fs.PathPolicy) fs.FileSystem {
	v := *f
	v.pol = p
	v.shared = true
	return &v
}

// accessOf is what an operation does with its path.
func accessOf(op string) []fs.Access {
	switch op {
	case "write", "edit":
		return []fs.Access{fs.AccessWrite, fs.AccessRead}
	}
	return []fs.Access{fs.AccessRead}
}

// guard checks the given path and its resolved form (a root-relative
// path free of links) before an operation touches them.
func (f *localFS) guard(ctx context.Context, op, clean, rel string) error {
	if f.pol == nil {
		return nil
	}
	real := f.ns(rel)
	for _, a := range accessOf(op) {
		if err := f.pol.CheckPath(ctx, clean, a, fs.FileID{}); err != nil {
			return denyErr(op, clean, err)
		}
		if real != clean {
			if err := f.pol.CheckPath(ctx, real, a, fs.FileID{}); err != nil {
				return denyErr(op, clean, err)
			}
		}
	}
	return nil
}

// guardOpened checks what was actually opened: the kernel's path of the
// open file, and its identity for hard links. rel is the resolved path
// it was opened by, used where the kernel cannot say.
func (f *localFS) guardOpened(ctx context.Context, op, clean, rel string, file *os.File, st os.FileInfo) error {
	if f.pol == nil {
		return nil
	}
	paths := []string{f.ns(rel)}
	if real, ok := fdPath(file); ok {
		paths = f.kernelForms(real)
	}
	id := fileID(st)
	for _, a := range accessOf(op) {
		for _, p := range paths {
			if err := f.pol.CheckPath(ctx, p, a, id); err != nil {
				return denyErr(op, clean, err)
			}
		}
	}
	return nil
}

// kernelForms maps a path the kernel reports for an open descriptor to
// namespace paths: the root's own spelling when it lies below the root's
// real path, and both spellings of a deleted file's path.
func (f *localFS) kernelForms(real string) []string {
	real = filepath.ToSlash(real)
	var out []string
	add := func(p string) {
		if !strings.HasPrefix(p, "/") {
			return
		}
		p = path.Clean(p)
		if rel, ok := fsimpl.Within(f.real, p); ok {
			p = f.ns(rel)
		}
		out = append(out, p)
	}
	add(real)
	if s, ok := strings.CutSuffix(real, " (deleted)"); ok {
		add(s)
	}
	return out
}

// allowedEntry reports whether a directory entry (named in the listed
// directory's resolved namespace path dir) may be shown.
func (f *localFS) allowedEntry(ctx context.Context, dir, name string, st os.FileInfo) bool {
	if f.pol == nil {
		return true
	}
	var id fs.FileID
	if st != nil && st.Mode().IsRegular() {
		id = fileID(st)
	}
	return f.pol.CheckPath(ctx, joinNS(dir, name), fs.AccessRead|fs.AccessListed, id) == nil
}

func denyErr(op, clean string, why error) error {
	return fs.NewError(harness.CodeDenied, &fs.PathError{Op: op, Path: clean, Err: why})
}

var _ fs.PolicyEnforcer = (*localFS)(nil)

// guardTemp checks where a change really lands: the directory the
// kernel reports for the temporary file, joined with the target's name.
// The rename that follows resolves the directory again; a directory
// swapped in between has no such temporary file, and the rename fails.
func (f *localFS) guardTemp(ctx context.Context, clean, name string, tmp *os.File) error {
	if f.pol == nil {
		return nil
	}
	real, ok := fdPath(tmp)
	if !ok {
		return nil // checked by its resolved path already
	}
	for _, dir := range f.kernelForms(path.Dir(filepath.ToSlash(real))) {
		target := joinNS(dir, name)
		for _, a := range accessOf("write") {
			if err := f.pol.CheckPath(ctx, target, a, fs.FileID{}); err != nil {
				return denyErr("write", clean, err)
			}
		}
	}
	return nil
}
