package permission

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// fsNow returns the time of the clock the kernel stamps files with (the
// coarse real-time clock, which lags the precise one by up to a tick), in
// Unix nanoseconds, or 0 when it cannot be read.
func fsNow() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// trustedFS reports whether the file system holding dir is a local one
// that stamps changes from this machine's clock (in nanoseconds, or in
// whole seconds on ext2 and ext3), so that the walk cache may rely on a
// directory's times there.
func trustedFS(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, zfsMagic, bcachefsMagic:
		return true
	}
	return false
}

// Magic numbers of file systems outside the kernel's headers.
const (
	zfsMagic      = 0x2fc12fc1
	bcachefsMagic = 0xca451a4e
)

func timespecNano(st *syscall.Stat_t, change bool) int64 {
	if change {
		return st.Ctim.Nano()
	}
	return st.Mtim.Nano()
}
