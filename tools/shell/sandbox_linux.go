//go:build linux

package shell

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// perNamespacePIDMax reports whether the kernel keeps pid_max per PID
// namespace (Linux 6.14 and later), so that setting it in a command's own
// namespace bounds only that command. On older kernels pid_max is
// machine-wide and is never touched.
func perNamespacePIDMax() bool {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return false
	}
	var b strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	major, minor, ok := kernelVersion(b.String())
	return ok && (major > 6 || major == 6 && minor >= 14)
}

// kernelVersion reads "6.18.44-..." as 6 and 18.
func kernelVersion(release string) (major, minor int, ok bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	end := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
	if end >= 0 {
		parts[1] = parts[1][:end]
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}

// ownDir reports whether dir is a directory (not a link) of this user
// that no one else can enter.
func ownDir(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm()&0o077 != 0 {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Geteuid()
}
