//go:build unix

package configfile

import "syscall"

// nonBlock keeps the open of a named pipe from waiting for a writer.
const nonBlock = syscall.O_NONBLOCK
