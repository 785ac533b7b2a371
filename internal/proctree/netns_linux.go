package proctree

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// loopbackUp brings up the loopback device in the network namespace of
// pid, from a thread of this process that enters that namespace for the
// time it takes (the kernel gives lo its addresses when it goes up).
// When the thread cannot go back to its own namespace it stays locked to
// its goroutine, and the runtime ends it with that goroutine.
func loopbackUp(pid int) error {
	target, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return err
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer self.Close()
		if err := setns(target, syscall.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		err = ifUp("lo")
		if rerr := setns(self, syscall.CLONE_NEWNET); rerr != nil {
			errc <- errors.Join(err, rerr) // the thread stays locked and ends
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

func setns(f *os.File, kind int) error { return unix.Setns(int(f.Fd()), kind) }

// ifUp sets the IFF_UP flag of the named interface of the calling
// thread's network namespace.
func ifUp(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	req, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, req); err != nil {
		return err
	}
	req.SetUint16(req.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, req)
}
