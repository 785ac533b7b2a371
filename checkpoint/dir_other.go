//go:build !linux

package checkpoint

import (
	iofs "io/fs"
	"os"
	"syscall"
)

// rootDir is a directory open as an os.Root, which confines every
// access to it.
type rootDir struct{ r *os.Root }

// openRootDir opens the workspace directory.
func openRootDir(dir string) (dirHandle, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &rootDir{r: r}, nil
}

func (d *rootDir) names() ([]string, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func (d *rootDir) lstat(name string) (info, error) {
	fi, err := d.r.Lstat(name)
	if err != nil {
		return info{}, err
	}
	return info{kind: kindOf(fi.Mode()), mode: fi.Mode().Perm(), size: fi.Size(), stat: statOf(fi)}, nil
}

func (d *rootDir) sub(name string) (dirHandle, error) {
	if fi, err := d.r.Lstat(name); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	r, err := d.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &rootDir{r: r}, nil
}

func (d *rootDir) open(name string) (*os.File, error) {
	if fi, err := d.r.Lstat(name); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: name, Err: iofs.ErrNotExist}
	}
	return d.r.Open(name)
}

func (d *rootDir) readlink(name string) (string, error) { return d.r.Readlink(name) }

func (d *rootDir) close() error { return d.r.Close() }
