package fslocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path"
	"syscall"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// Write implements fs.FileSystem. The new content goes to a temporary
// file (mode 0600) in the same directory, which is synced, given the mode
// of the file it replaces (0644 for a new file), and renamed over the
// target; then the directory is synced. A create-only write links the
// temporary file to the target name instead, which fails if a file
// appeared there meanwhile, so it can never clobber one. A symbolic link
// inside the root is written through: its target is replaced, the link
// stays. If a directory on the path is swapped for a link that leaves the
// root while the write runs, the write fails with harness.CodeOutsideRoot and
// its temporary file may remain in the directory that was moved away.
func (f *localFS) Write(ctx context.Context, p string, data []byte, opts fs.WriteOptions) (*fs.WriteResult, error) {
	clean, rel, unlock, err := f.lockPath(ctx, "write", p)
	if err != nil {
		return nil, err
	}
	defer unlock()
	f.at("write:locked", rel)

	file, m, info, err := f.openFile(ctx, "write", clean, rel)
	if errors.Is(err, harness.CodeNotFound) {
		if opts.Pre.Version != "" {
			return nil, fs.NewError(harness.CodeStale, &fs.PathError{Op: "write", Path: clean, Detail: "the file no longer exists", Err: iofs.ErrNotExist})
		}
		if dir := path.Dir(rel); dir != "." {
			if err := f.r.MkdirAll(dir, 0o755); err != nil {
				return nil, mapErr("write", clean, err)
			}
		}
		nm, err := f.commit(ctx, clean, rel, data, 0o644, nil, true)
		if err != nil {
			return nil, err
		}
		info := fs.FileInfo{Path: clean, Size: int64(len(data)), Mode: 0o644, ModTime: nowOr(nm), Version: f.tokenFor(nm, sumBytes(data), true)}
		return &fs.WriteResult{Info: info, Created: true, Written: data}, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if opts.Pre.Absent {
		return nil, fs.NewError(harness.CodeExists, &fs.PathError{Op: "write", Path: clean, Err: iofs.ErrExist})
	}
	res := &fs.WriteResult{PreviousSize: m.size}
	var prevSum uint64
	if m.size <= fsimpl.MaxPrevious {
		prev, err := readAll(file, m.size, fsimpl.MaxPrevious)
		if err != nil {
			return nil, mapErr("write", clean, err)
		}
		res.Previous, res.PreviousSize = prev, int64(len(prev))
		prevSum = sumBytes(prev)
	}
	if opts.Pre.Version != "" {
		ok, err := matches(opts.Pre.Version, m, func() (uint64, error) {
			if res.Previous != nil {
				return prevSum, nil
			}
			return sumReader(io.NewSectionReader(file, 0, 1<<62))
		})
		if err != nil {
			return nil, mapErr("write", clean, err)
		}
		if !ok {
			return nil, fs.NewError(harness.CodeStale, &fs.PathError{Op: "write", Path: clean, Detail: "the file changed since that version"})
		}
	}
	if opts.KeepStyle {
		style := res.Previous
		if style == nil {
			style = make([]byte, 1<<20)
			n, _ := file.ReadAt(style, 0)
			style = style[:n]
		}
		data = fsimpl.MatchStyle(style, data)
	}
	res.Written = data
	if res.Previous != nil && bytes.Equal(res.Previous, data) {
		res.Unchanged = true
		info.Version = f.tokenFor(m, prevSum, true)
		res.Info = info
		return res, nil
	}
	nm, err := f.commit(ctx, clean, rel, data, info.Mode.Perm(), &m, false)
	if err != nil {
		return nil, err
	}
	res.Info = fs.FileInfo{Path: clean, Size: int64(len(data)), Mode: info.Mode, ModTime: nowOr(nm), Version: f.tokenFor(nm, sumBytes(data), true)}
	return res, nil
}

// Edit implements fs.FileSystem. The version is checked before the text
// is searched; the result is written as Write writes.
func (f *localFS) Edit(ctx context.Context, p string, e fs.Edit, pre fs.Precondition) (*fs.EditResult, error) {
	clean, rel, unlock, err := f.lockPath(ctx, "edit", p)
	if err != nil {
		return nil, err
	}
	defer unlock()
	f.at("edit:locked", rel)
	file, m, info, err := f.openFile(ctx, "edit", clean, rel)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if pre.Absent {
		return nil, fs.NewError(harness.CodeExists, &fs.PathError{Op: "edit", Path: clean, Err: iofs.ErrExist})
	}
	if m.size > fsimpl.MaxEditSize {
		return nil, fs.NewError(harness.CodeTooLarge, &fs.PathError{Op: "edit", Path: clean, Total: m.size, Limit: fsimpl.MaxEditSize})
	}
	old, err := readAll(file, m.size, fsimpl.MaxEditSize)
	if err != nil {
		return nil, mapErr("edit", clean, err)
	}
	if int64(len(old)) > fsimpl.MaxEditSize {
		return nil, fs.NewError(harness.CodeTooLarge, &fs.PathError{Op: "edit", Path: clean, Total: int64(len(old)), Limit: fsimpl.MaxEditSize, Detail: "the file grew while it was read"})
	}
	if pre.Version != "" {
		ok, _ := matches(pre.Version, m, func() (uint64, error) { return sumBytes(old), nil })
		if !ok {
			return nil, fs.NewError(harness.CodeStale, &fs.PathError{Op: "edit", Path: clean, Detail: "the file changed since that version"})
		}
	}
	out, spans, err := fs.ApplyEdit(old, e)
	if err != nil {
		return nil, fsimpl.WithPath(err, clean)
	}
	nm, err := f.commit(ctx, clean, rel, out, info.Mode.Perm(), &m, false)
	if err != nil {
		return nil, err
	}
	info = fs.FileInfo{Path: clean, Size: int64(len(out)), Mode: info.Mode, ModTime: nowOr(nm), Version: f.tokenFor(nm, sumBytes(out), true)}
	return &fs.EditResult{Info: info, Replacements: len(spans), Old: old, New: out, Spans: spans}, nil
}

// commit writes data to rel atomically and returns the metadata of the
// new file. prev, when set, is the file being replaced: its owner is kept
// where the process may set it.
func (f *localFS) commit(ctx context.Context, clean, rel string, data []byte, perm os.FileMode, prev *meta, create bool) (meta, error) {
	dir, base := path.Split(rel)
	if len(base) > 200 {
		base = base[:200]
	}
	tmp := path.Join(dir, fmt.Sprintf(".%s.%016x.tmp", base, rand.Uint64()))
	tf, err := f.r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return meta{}, mapErr("write", clean, err)
	}
	placed := false
	defer func() {
		tf.Close()
		if !placed {
			f.r.Remove(tmp)
		}
	}()
	if err := f.guardTemp(ctx, clean, path.Base(rel), tf); err != nil {
		return meta{}, err
	}
	if _, err := tf.Write(data); err != nil {
		return meta{}, mapErr("write", clean, err)
	}
	if err := tf.Sync(); err != nil {
		return meta{}, mapErr("write", clean, err)
	}
	if err := tf.Chmod(perm); err != nil {
		return meta{}, mapErr("write", clean, err)
	}
	if prev != nil && prev.hasOwner && (prev.uid != os.Getuid() || prev.gid != os.Getgid()) {
		_ = tf.Chown(prev.uid, prev.gid) // best effort: only privileged processes may
	}
	f.at("commit", rel)
	// The last point at which the change can still be called off.
	if err := fsimpl.Aborted(ctx, "write", clean); err != nil {
		return meta{}, err
	}
	if create {
		err = f.r.Link(tmp, rel)
		switch {
		case err == nil:
		case errors.Is(err, iofs.ErrExist):
			return meta{}, fs.NewError(harness.CodeExists, &fs.PathError{Op: "write", Path: clean, Err: iofs.ErrExist})
		case isEscape(err) || errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			return meta{}, mapErr("write", clean, err)
		default:
			// No hard links here (some FUSE and network file
			// systems): create exclusively in place instead. Not atomic
			// for readers, but still never clobbers.
			return f.createInPlace(clean, rel, data, perm)
		}
		f.r.Remove(tmp)
		placed = true
	} else {
		if err := f.r.Rename(tmp, rel); err != nil {
			return meta{}, mapErr("write", clean, err)
		}
		placed = true
	}
	f.syncDir(dir)
	st, err := tf.Stat()
	if err != nil {
		return meta{}, nil
	}
	return statMeta(st), nil
}

func (f *localFS) createInPlace(clean, rel string, data []byte, perm os.FileMode) (meta, error) {
	out, err := f.r.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return meta{}, mapErr("write", clean, err)
	}
	defer out.Close()
	if _, err := out.Write(data); err != nil {
		return meta{}, mapErr("write", clean, err)
	}
	if err := out.Sync(); err != nil {
		return meta{}, mapErr("write", clean, err)
	}
	f.syncDir(path.Dir(rel))
	st, err := out.Stat()
	if err != nil {
		return meta{}, nil
	}
	return statMeta(st), nil
}

// syncDir makes a rename or link in dir durable. Some file systems do
// not support syncing a directory; that is not an error.
func (f *localFS) syncDir(dir string) {
	if dir == "" {
		dir = "."
	}
	d, err := f.r.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}

// lockPath resolves p and takes the lock of the file it names. It
// resolves again under the lock, since a link may have changed while it
// waited, and starts over if the file named is no longer the same.
func (f *localFS) lockPath(ctx context.Context, op, p string) (string, string, func(), error) {
	for {
		clean, rel, err := f.begin(ctx, op, p)
		if err != nil {
			return "", "", nil, err
		}
		unlock, err := f.locks.lock(ctx, f.ns(rel)) // by namespace path: views of OpenDir share the table
		if err != nil {
			return "", "", nil, mapErr(op, clean, err)
		}
		_, again, err := f.locate(op, p)
		if err != nil {
			unlock()
			return "", "", nil, err
		}
		if again == rel {
			return clean, rel, unlock, nil
		}
		unlock()
	}
}

// nowOr returns the modification time of m, or the current time when the
// metadata is unknown.
func nowOr(m meta) time.Time {
	if m.mtime == 0 {
		return time.Now()
	}
	return time.Unix(0, m.mtime)
}

// at runs the test hook.
func (f *localFS) at(stage, rel string) {
	if f.hook != nil {
		f.hook(stage, rel)
	}
}
