package fslocal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path"
	"sort"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// openFile opens the regular file at the resolved rel for reading and
// returns it with its metadata and description (without version).
func (f *localFS) openFile(ctx context.Context, op, clean, rel string) (*os.File, meta, fs.FileInfo, error) {
	f.at("open", rel)
	file, err := f.r.OpenFile(rel, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		return nil, meta{}, fs.FileInfo{}, mapErr(op, clean, err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, meta{}, fs.FileInfo{}, mapErr(op, clean, err)
	}
	if err := f.guardOpened(ctx, op, clean, rel, file, st); err != nil {
		file.Close()
		return nil, meta{}, fs.FileInfo{}, err
	}
	if !st.Mode().IsRegular() {
		file.Close()
		detail := "is not a regular file"
		if st.IsDir() {
			detail = "is a directory"
		}
		return nil, meta{}, fs.FileInfo{}, fs.NewError(harness.CodeNotRegular, &fs.PathError{Op: op, Path: clean, Detail: detail})
	}
	info := fs.FileInfo{Path: clean, Size: st.Size(), Mode: st.Mode(), ModTime: st.ModTime()}
	return file, statMeta(st), info, nil
}

// tokenFor makes the version of a file whose metadata is m and whose
// content sums to sum (when hasSum).
func (f *localFS) tokenFor(m meta, sum uint64, hasSum bool) string {
	return token{meta: m.digest(), proven: m.provenAt(f.now()), sum: sum, hasSum: hasSum}.String()
}

// Stat implements fs.FileSystem. The version of a regular file is taken
// from its metadata when that proves it; a file changed in the last
// seconds is read and summed (up to fsimpl.MaxEditSize).
func (f *localFS) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	clean, rel, err := f.begin(ctx, "stat", p)
	if err != nil {
		return fs.FileInfo{}, err
	}
	st, err := f.r.Stat(rel)
	if err != nil {
		return fs.FileInfo{}, mapErr("stat", clean, err)
	}
	info := fs.FileInfo{Path: clean, Mode: st.Mode(), ModTime: st.ModTime()}
	if !st.Mode().IsRegular() {
		return info, nil
	}
	file, m, info, err := f.openFile(ctx, "stat", clean, rel)
	if err != nil {
		return fs.FileInfo{}, err
	}
	defer file.Close()
	if m.provenAt(f.now()) || m.size > fsimpl.MaxEditSize {
		// Proven by metadata; or too large to sum, and then a recent
		// change makes the version one that never matches.
		info.Version = f.tokenFor(m, 0, false)
		return info, nil
	}
	if sum, err := sumReader(io.LimitReader(file, m.size)); err == nil {
		info.Version = f.tokenFor(m, sum, true)
	}
	return info, nil
}

// ReadText implements fs.FileSystem. It reads the file once, to the size
// it had when opened, counting lines and (for files up to
// fsimpl.MaxEditSize) summing the bytes for the version.
func (f *localFS) ReadText(ctx context.Context, p string, w fs.Window) (*fs.Text, error) {
	clean, rel, err := f.begin(ctx, "read", p)
	if err != nil {
		return nil, err
	}
	file, m, info, err := f.openFile(ctx, "read", clean, rel)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	// Sum the content as it streams by, unless the file is too large to
	// edit: then the metadata alone decides its version, and a huge log
	// scans at the speed of wc -l.
	// The limit goes outside the sum, so that ScanText sees the size.
	var h hasher
	var r io.Reader = io.LimitReader(file, m.size)
	summed := m.size <= fsimpl.MaxEditSize
	if summed {
		r = io.LimitReader(io.TeeReader(file, &h), m.size)
	}
	t, err := fs.ScanText(ctx, r, w)
	if err != nil {
		return nil, fsimpl.WithPath(err, clean)
	}
	info.Version = f.tokenFor(m, h.Sum64(), summed)
	t.Info = info
	return t, nil
}

// ReadBytes implements fs.FileSystem.
func (f *localFS) ReadBytes(ctx context.Context, p string, maxBytes int64) ([]byte, fs.FileInfo, error) {
	clean, rel, err := f.begin(ctx, "read", p)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	file, m, info, err := f.openFile(ctx, "read", clean, rel)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	defer file.Close()
	tooLarge := func(size int64, detail string) error {
		return fs.NewError(harness.CodeTooLarge, &fs.PathError{Op: "read", Path: clean, Total: size, Limit: maxBytes, Detail: detail})
	}
	if m.size > maxBytes {
		return nil, fs.FileInfo{}, tooLarge(m.size, "")
	}
	f.at("read:opened", rel)
	data, err := readAll(file, m.size, maxBytes)
	if err != nil {
		return nil, fs.FileInfo{}, mapErr("read", clean, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fs.FileInfo{}, tooLarge(int64(len(data)), "the file grew while it was read")
	}
	info.Size = int64(len(data))
	info.Version = f.tokenFor(m, sumBytes(data), true)
	return data, info, nil
}

// readAll reads r to its end, or until it has read one byte more than
// limit. size is the expected length.
func readAll(r io.Reader, size, limit int64) ([]byte, error) {
	b := bytes.NewBuffer(make([]byte, 0, min(size, limit)+bytes.MinRead))
	if limit < math.MaxInt64 {
		r = io.LimitReader(r, limit+1)
	}
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// Open implements fs.Opener. The returned FileInfo carries a version only
// when the metadata proves it (see Stat); the stream reads the file as it
// is when read.
func (f *localFS) Open(ctx context.Context, p string) (io.ReadCloser, fs.FileInfo, error) {
	if rc, info, ok := f.openByName(ctx, p); ok {
		return rc, info, nil
	}
	clean, rel, err := f.begin(ctx, "open", p)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	file, m, info, err := f.openFile(ctx, "open", clean, rel)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	if m.provenAt(f.now()) {
		info.Version = f.tokenFor(m, 0, false)
	}
	return file, info, nil
}

// ReadDir implements fs.FileSystem.
func (f *localFS) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	return f.readDir(ctx, p, false, nil)
}

// ReadDirTypes implements fsimpl.TypeLister: ReadDir without the status
// call per entry when no path policy needs one, the entries then holding
// only their paths and type bits unless describe picks them.
func (f *localFS) ReadDirTypes(ctx context.Context, p string, describe func(name string, typ os.FileMode) bool) ([]fs.FileInfo, error) {
	return f.readDir(ctx, p, f.pol == nil, describe)
}

func (f *localFS) readDir(ctx context.Context, p string, typesOnly bool, describe func(string, os.FileMode) bool) ([]fs.FileInfo, error) {
	clean, rel, err := f.begin(ctx, "readdir", p)
	if err != nil {
		return nil, err
	}
	f.at("open", rel)
	d, err := f.r.OpenFile(rel, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		return nil, mapErr("readdir", clean, err)
	}
	kept := false
	defer func() {
		if !kept {
			d.Close()
		}
	}()
	st, err := d.Stat()
	if err != nil {
		return nil, mapErr("readdir", clean, err)
	}
	if !st.IsDir() {
		return nil, fs.NewError(harness.CodeNotDir, &fs.PathError{Op: "readdir", Path: clean, Detail: "is a file"})
	}
	if err := f.guardOpened(ctx, "readdir", clean, rel, d, st); err != nil {
		return nil, err
	}
	// Entries are checked by the directory's real path.
	dir := f.ns(rel)
	if f.pol != nil {
		if real, ok := fdPath(d); ok {
			dir = f.kernelForms(real)[0]
		}
	}
	if typesOnly {
		ents, err := listTypes(d)
		if err == nil {
			if rel == "." {
				kept = f.dir.keep(d)
			}
			out := make([]fs.FileInfo, 0, len(ents))
			for _, e := range ents {
				fi := fs.FileInfo{Path: joinNS(clean, e.name), Mode: e.mode}
				if describe != nil && describe(e.name, e.mode) {
					st, err := f.r.Lstat(path.Join(rel, e.name))
					if err != nil {
						continue // gone since it was listed, as ReadDir leaves it out
					}
					fi.Mode, fi.ModTime = st.Mode(), st.ModTime()
					if st.Mode().IsRegular() {
						fi.Size = st.Size()
					}
				}
				out = append(out, fi)
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
			return out, nil
		}
		if !errors.Is(err, errNoListTypes) {
			return nil, mapErr("readdir", clean, err)
		}
		if _, err := d.Seek(0, io.SeekStart); err != nil {
			return nil, mapErr("readdir", clean, err)
		}
	}
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, mapErr("readdir", clean, err)
	}
	if rel == "." {
		kept = f.dir.keep(d) // a view's own directory, for Open
	}
	out := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		fi := fs.FileInfo{Path: joinNS(clean, e.Name()), Mode: e.Type()}
		st, err := e.Info()
		if err == nil {
			fi.Mode, fi.ModTime = st.Mode(), st.ModTime()
			if st.Mode().IsRegular() {
				fi.Size = st.Size()
			}
		}
		if !f.allowedEntry(ctx, dir, e.Name(), st) || (dir != clean && !f.allowedEntry(ctx, clean, e.Name(), st)) {
			continue
		}
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func joinNS(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// OpenDir implements fs.DirOpener: the view is an FS whose root is the
// directory dir, opened through f's root (so it cannot leave it), which
// shares nothing with f but the namespace. Close it when done.
func (f *localFS) OpenDir(ctx context.Context, dir string) (fs.FileSystem, error) {
	clean, rel, err := f.begin(ctx, "opendir", dir)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		r, err := f.r.OpenRoot(".")
		if err != nil {
			return nil, mapErr("opendir", clean, err)
		}
		return &localFS{root: f.root, real: f.real, r: r, locks: f.locks, now: f.now, hook: f.hook, pol: f.pol, dir: &dirHandle{}}, nil
	}
	r, err := f.r.OpenRoot(rel)
	if err != nil {
		if st, serr := f.r.Stat(rel); serr == nil && !st.IsDir() {
			return nil, fs.NewError(harness.CodeNotDir, &fs.PathError{Op: "opendir", Path: clean, Detail: "is a file"})
		}
		return nil, mapErr("opendir", clean, err)
	}
	// Under a path policy the view needs no check of its own: every file
	// and directory it opens is checked by the kernel's path then.
	v := &localFS{root: clean, real: joinNS(f.real, rel), r: r, locks: f.locks, now: f.now, hook: f.hook, pol: f.pol, dir: &dirHandle{}}
	return v, nil
}

var _ fsimpl.TypeLister = (*localFS)(nil)

// dirent is a directory entry as listTypes reports it.
type dirent struct {
	name string
	mode os.FileMode
}

// errNoListTypes: listTypes cannot list this directory (or system).
var errNoListTypes = errors.New("directory entry types unknown")
