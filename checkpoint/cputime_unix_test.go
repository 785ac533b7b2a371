//go:build unix

package checkpoint_test

import (
	"syscall"
	"time"
)

// cpuTime is the user and system time of this process and its waited-for
// children so far: the CPU a benchmark step used, whoever ran it.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
