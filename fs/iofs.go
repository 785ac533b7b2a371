package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"math"
	"path"
	"time"
)

// IOFS returns a read-only io/fs.FS view of the directory dir (an absolute
// namespace path) of fsys, for code written against io/fs: templates,
// fs.WalkDir, http.FS. Names are io/fs names relative to dir. Every
// operation uses ctx. Files stream when fsys implements [Opener];
// otherwise they are read whole when opened.
//
// The view implements fs.ReadDirFS, fs.ReadFileFS and fs.StatFS.
func IOFS(ctx context.Context, fsys FileSystem, dir string) iofs.FS {
	return &ioView{ctx: ctx, fsys: fsys, dir: dir}
}

type ioView struct {
	ctx  context.Context
	fsys FileSystem
	dir  string
}

func (v *ioView) full(op, name string) (string, error) {
	if !iofs.ValidPath(name) {
		return "", &iofs.PathError{Op: op, Path: name, Err: iofs.ErrInvalid}
	}
	return path.Join(v.dir, name), nil
}

func (v *ioView) Open(name string) (iofs.File, error) {
	full, err := v.full("open", name)
	if err != nil {
		return nil, err
	}
	fi, err := v.fsys.Stat(v.ctx, full)
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
	}
	fi.Path = full
	if fi.Mode.IsDir() {
		return &ioDir{v: v, name: name, info: fi}, nil
	}
	if o, ok := v.fsys.(Opener); ok {
		rc, info, err := o.Open(v.ctx, full)
		if err != nil {
			return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
		}
		return &ioFile{name: name, info: info, r: rc, c: rc}, nil
	}
	data, info, err := v.fsys.ReadBytes(v.ctx, full, math.MaxInt64)
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
	}
	return &ioFile{name: name, info: info, r: bytes.NewReader(data)}, nil
}

func (v *ioView) Stat(name string) (iofs.FileInfo, error) {
	full, err := v.full("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := v.fsys.Stat(v.ctx, full)
	if err != nil {
		return nil, &iofs.PathError{Op: "stat", Path: name, Err: err}
	}
	return ioInfo{fi: fi, name: baseName(name)}, nil
}

func (v *ioView) ReadFile(name string) ([]byte, error) {
	full, err := v.full("readfile", name)
	if err != nil {
		return nil, err
	}
	data, _, err := v.fsys.ReadBytes(v.ctx, full, math.MaxInt64)
	if err != nil {
		return nil, &iofs.PathError{Op: "readfile", Path: name, Err: err}
	}
	return data, nil
}

func (v *ioView) ReadDir(name string) ([]iofs.DirEntry, error) {
	full, err := v.full("readdir", name)
	if err != nil {
		return nil, err
	}
	list, err := v.fsys.ReadDir(v.ctx, full)
	if err != nil {
		return nil, &iofs.PathError{Op: "readdir", Path: name, Err: err}
	}
	out := make([]iofs.DirEntry, len(list))
	for i, fi := range list {
		out[i] = iofs.FileInfoToDirEntry(ioInfo{fi: fi, name: path.Base(fi.Path)})
	}
	return out, nil
}

func baseName(name string) string {
	if name == "." {
		return "."
	}
	return path.Base(name)
}

// ioInfo adapts FileInfo to io/fs.FileInfo.
type ioInfo struct {
	fi   FileInfo
	name string
}

func (i ioInfo) Name() string        { return i.name }
func (i ioInfo) Size() int64         { return i.fi.Size }
func (i ioInfo) Mode() iofs.FileMode { return i.fi.Mode }
func (i ioInfo) ModTime() time.Time  { return i.fi.ModTime }
func (i ioInfo) IsDir() bool         { return i.fi.Mode.IsDir() }
func (i ioInfo) Sys() any            { return nil }
func (i ioInfo) String() string      { return iofs.FormatFileInfo(i) }

type ioFile struct {
	name string
	info FileInfo
	r    io.Reader
	c    io.Closer
}

func (f *ioFile) Stat() (iofs.FileInfo, error) {
	return ioInfo{fi: f.info, name: baseName(f.name)}, nil
}

func (f *ioFile) Read(p []byte) (int, error) {
	if f.r == nil {
		return 0, &iofs.PathError{Op: "read", Path: f.name, Err: iofs.ErrClosed}
	}
	return f.r.Read(p)
}

func (f *ioFile) Close() error {
	if f.r == nil {
		return &iofs.PathError{Op: "close", Path: f.name, Err: iofs.ErrClosed}
	}
	f.r = nil
	if f.c != nil {
		return f.c.Close()
	}
	return nil
}

type ioDir struct {
	v      *ioView
	name   string
	info   FileInfo
	list   []iofs.DirEntry
	loaded bool
	closed bool
}

func (d *ioDir) Stat() (iofs.FileInfo, error) {
	return ioInfo{fi: d.info, name: baseName(d.name)}, nil
}

func (d *ioDir) Read([]byte) (int, error) {
	return 0, &iofs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

func (d *ioDir) Close() error {
	if d.closed {
		return &iofs.PathError{Op: "close", Path: d.name, Err: iofs.ErrClosed}
	}
	d.closed = true
	return nil
}

func (d *ioDir) ReadDir(n int) ([]iofs.DirEntry, error) {
	if !d.loaded {
		list, err := d.v.ReadDir(d.name)
		if err != nil {
			return nil, err
		}
		d.list, d.loaded = list, true
	}
	if n <= 0 {
		out := d.list
		d.list = nil
		return out, nil
	}
	if len(d.list) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.list))
	out := d.list[:n]
	d.list = d.list[n:]
	return out, nil
}
