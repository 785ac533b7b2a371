//go:build linux

package fslocal

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// dirHandle is the directory of a view (OpenDir), held open from its
// first listing until the view is closed, so that the view opens a file
// of that directory by name with one openat: no walk from the root, no
// link resolution, and a descriptor the runtime's poller never sees (it
// refuses regular files, at the cost of a failing system call each).
type dirHandle struct {
	mu     sync.Mutex
	file   *os.File
	closed bool
}

// keep holds d (a listing of the view's directory) unless one is held
// already or the view is closed; the caller closes d when it is not kept.
func (h *dirHandle) keep(d *os.File) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file != nil || h.closed {
		return false
	}
	h.file = d
	return true
}

func (h *dirHandle) close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file != nil {
		h.file.Close()
		h.file = nil
	}
	h.closed = true
}

// openat opens name in the directory without following a symbolic link
// and without blocking on a FIFO.
func (h *dirHandle) openat(name string) (int, bool) {
	h.mu.Lock()
	d := h.file
	h.mu.Unlock()
	if d == nil {
		return -1, false
	}
	conn, err := d.SyscallConn()
	if err != nil {
		return -1, false
	}
	fd := -1
	cerr := conn.Control(func(dirfd uintptr) {
		for {
			fd, err = syscall.Openat(int(dirfd), name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
			if err != syscall.EINTR {
				return
			}
		}
	})
	if cerr != nil || err != nil {
		return -1, false
	}
	return fd, true
}

// openByName is Open's fast path: a regular file named directly in a
// view's listed directory, without a path policy (whose checks need the
// full path). It reports false, having opened nothing, for anything else
// (a symbolic link, a missing or special file, a path with a slash), and
// Open then takes the general path, which says what is wrong.
func (f *localFS) openByName(ctx context.Context, p string) (io.ReadCloser, fs.FileInfo, bool) {
	if f.dir == nil || f.pol != nil || ctx.Err() != nil {
		return nil, fs.FileInfo{}, false
	}
	clean, rel, err := f.rel("open", p)
	if err != nil || rel == "." || strings.Contains(rel, "/") {
		return nil, fs.FileInfo{}, false
	}
	if fsimpl.Aborted(ctx, "open", clean) != nil {
		return nil, fs.FileInfo{}, false
	}
	f.at("open", rel)
	fd, ok := f.dir.openat(rel)
	if !ok {
		return nil, fs.FileInfo{}, false
	}
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, fs.FileInfo{}, false
	}
	m := meta{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: ctime(&st), hasCtime: true,
		uid: int(st.Uid), gid: int(st.Gid), hasOwner: true}
	info := fs.FileInfo{Path: clean, Size: st.Size, Mode: regularMode(st.Mode), ModTime: time.Unix(0, m.mtime)}
	if m.provenAt(f.now()) {
		info.Version = f.tokenFor(m, 0, false)
	}
	return &rawFile{fd: fd, name: clean}, info, true
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		if err := syscall.Fstat(fd, st); err != syscall.EINTR {
			return err
		}
	}
}

// regularMode is the fs.FileMode of a regular file of the given st_mode,
// as os.Stat reports it.
func regularMode(mode uint32) os.FileMode {
	m := os.FileMode(mode & 0o777)
	if mode&syscall.S_ISUID != 0 {
		m |= os.ModeSetuid
	}
	if mode&syscall.S_ISGID != 0 {
		m |= os.ModeSetgid
	}
	if mode&syscall.S_ISVTX != 0 {
		m |= os.ModeSticky
	}
	return m
}

// rawFile reads a regular file by its descriptor with plain system
// calls.
type rawFile struct {
	fd   int
	name string
}

// maxRead bounds one read, as package os does.
const maxRead = 1 << 30

func (r *rawFile) Read(b []byte) (int, error) {
	if r.fd < 0 {
		return 0, os.ErrClosed
	}
	if len(b) == 0 {
		return 0, nil
	}
	if len(b) > maxRead {
		b = b[:maxRead]
	}
	for {
		n, err := syscall.Read(r.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: r.name, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r *rawFile) Close() error {
	if r.fd < 0 {
		return os.ErrClosed
	}
	err := syscall.Close(r.fd)
	r.fd = -1
	if err != nil {
		return &os.PathError{Op: "close", Path: r.name, Err: err}
	}
	return nil
}

// listTypes lists the directory d by its entries' names and types as
// the kernel reports them (getdents), with no status call per entry
// (os.File.ReadDir makes one per entry for a directory opened in an
// os.Root). It fails with errNoListTypes when the file system leaves a
// type unknown.
func listTypes(d *os.File) ([]dirent, error) {
	conn, err := d.SyscallConn()
	if err != nil {
		return nil, err
	}
	var out []dirent
	buf := make([]byte, 16<<10)
	var rerr error
	cerr := conn.Control(func(fd uintptr) {
		for {
			n, err := syscall.Getdents(int(fd), buf)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				rerr = &os.PathError{Op: "readdirent", Path: d.Name(), Err: err}
				return
			}
			if n <= 0 {
				return
			}
			for rec := buf[:n]; len(rec) >= 19; {
				reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
				if reclen < 19 || reclen > len(rec) {
					rerr = &os.PathError{Op: "readdirent", Path: d.Name(), Err: syscall.EINVAL}
					return
				}
				typ := rec[18]
				name := rec[19:reclen]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
				rec = rec[reclen:]
				if len(name) == 0 || string(name) == "." || string(name) == ".." {
					continue
				}
				mode, ok := direntMode(typ)
				if !ok {
					rerr = errNoListTypes // the file system leaves types unknown
					return
				}
				out = append(out, dirent{name: string(name), mode: mode})
			}
		}
	})
	if cerr != nil {
		return nil, cerr
	}
	return out, rerr
}

// direntMode maps a getdents type to the type bits of an os.FileMode.
func direntMode(t uint8) (os.FileMode, bool) {
	switch t {
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_DIR:
		return os.ModeDir, true
	case syscall.DT_LNK:
		return os.ModeSymlink, true
	case syscall.DT_FIFO:
		return os.ModeNamedPipe, true
	case syscall.DT_SOCK:
		return os.ModeSocket, true
	case syscall.DT_CHR:
		return os.ModeDevice | os.ModeCharDevice, true
	case syscall.DT_BLK:
		return os.ModeDevice, true
	}
	return 0, false
}
