package persistent

import (
	"syscall"
	"unsafe"
)

// rawPipes says that readLoop can read the output pipe itself, under the
// shell's lock, and that pipeBytes works.
const rawPipes = true

// readFD reads from a descriptor in non-blocking mode.
func readFD(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }

// fionread is the ioctl that returns the bytes waiting in a pipe.
const fionread = 0x541B

// pipeBytes returns how many bytes wait in the pipe whose read end is fd.
func pipeBytes(fd uintptr) (int, bool) {
	var n int32
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, fionread, uintptr(unsafe.Pointer(&n)))
	return int(n), e == 0
}
