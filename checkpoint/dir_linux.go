package checkpoint

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdDir is a directory open as a file descriptor: entries are listed
// with getdents and described with fstatat relative to it, one system
// call each, which is what makes a scan of an unchanged tree cheap.
type fdDir struct {
	fd  int
	buf *[]byte // the scan's listing buffer, shared by its handles
}

// openRootDir opens the workspace directory.
func openRootDir(dir string) (dirHandle, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	buf := make([]byte, 32<<10)
	return &fdDir{fd: fd, buf: &buf}, nil
}

func (d *fdDir) names() ([]string, error) {
	var names []string
	buf := *d.buf
	for {
		n, err := unix.ReadDirent(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "getdents", Path: ".", Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

func (d *fdDir) lstat(name string) (info, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return info{}, &os.PathError{Op: "lstat", Path: name, Err: err}
		}
		break
	}
	var k Kind
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		k = KindFile
	case unix.S_IFDIR:
		k = KindDir
	case unix.S_IFLNK:
		k = KindSymlink
	}
	return info{
		kind: k,
		mode: permOf(uint32(st.Mode)),
		size: st.Size,
		stat: Stat{MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(), Ino: uint64(st.Ino), Dev: uint64(st.Dev)},
	}, nil
}

func (d *fdDir) sub(name string) (dirHandle, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return &fdDir{fd: fd, buf: d.buf}, nil
}

func (d *fdDir) open(name string) (*os.File, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

func (d *fdDir) readlink(name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err == unix.EINTR {
			size /= 2
			continue
		}
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: name, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

func (d *fdDir) close() error { return unix.Close(d.fd) }

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// permOf returns the permission bits of a stat mode.
func permOf(m uint32) os.FileMode { return os.FileMode(m & 0o777) }
