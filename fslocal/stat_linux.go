//go:build linux

package fslocal

import "syscall"

// ctime returns a file's status change time, in Unix nanoseconds.
func ctime(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
