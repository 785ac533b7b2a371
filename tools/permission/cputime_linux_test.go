package permission

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling thread used, which a loaded
// machine's waits for a CPU do not inflate; the benchmark locks its
// goroutine to its thread.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
