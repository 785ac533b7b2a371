//go:build unix

package checkpoint

import (
	iofs "io/fs"
	"syscall"
)

// statOf returns the metadata the stat cache compares.
func statOf(fi iofs.FileInfo) Stat {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stat{MtimeNS: fi.ModTime().UnixNano()}
	}
	return Stat{
		MtimeNS: fi.ModTime().UnixNano(),
		CtimeNS: ctimeNS(st),
		Ino:     uint64(st.Ino),
		Dev:     uint64(st.Dev), //nolint:unconvert // int32 on some systems
	}
}
