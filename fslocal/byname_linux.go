//go:build linux

package fslocal

import (
	"context"
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
