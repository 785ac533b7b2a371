//go:build unix

package fslocal

import "syscall"

// openReadFlags opens without blocking, so that a FIFO swapped in for a
// file cannot hang a read; regular files ignore the flag.
const openReadFlags = syscall.O_NONBLOCK
