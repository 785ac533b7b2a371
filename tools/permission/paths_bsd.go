//go:build unix && !linux

package permission

import (
	"syscall"
	"time"
)

// fsNow returns the time a directory's change must be older than for its
// listing to be kept: where the file system clock cannot be read, two
// seconds (racy) before now.
func fsNow() int64 { return time.Now().Add(-racy).UnixNano() }

// trustedFS reports that the walk cache may rely on a directory's times:
// here they are trusted as they were before the file system was known.
func trustedFS(string) bool { return true }

func timespecNano(st *syscall.Stat_t, change bool) int64 {
	if change {
		return time.Unix(st.Ctimespec.Unix()).UnixNano()
	}
	return time.Unix(st.Mtimespec.Unix()).UnixNano()
}
