package shell

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const unixTable = `Num       RefCount Protocol Flags    Type St Inode Path
ffff8881: 00000002 00000000 00010000 0001 01 23457 /run/systemd/private
ffff8882: 00000002 00000000 00010000 0001 01 23458 @/tmp/.X11-unix/X0
ffff8883: 00000003 00000000 00000000 0001 03 23459
ffff8884: 00000002 00000000 00010000 0001 01 23460 /var/run/docker.sock
ffff8885: 00000002 00000000 00010000 0001 01 23461 /srv/a b/app.sock
ffff8886: 00000002 00000000 00010000 0001 01 23462 /run//systemd/private
`

func TestParseUnixSockets(t *testing.T) {
	got := parseUnixSockets(strings.NewReader(unixTable))
	assert.Equal(t, []string{"/run/systemd/private", "/var/run/docker.sock", "/srv/a b/app.sock"}, got)
}

// FuzzParseUnixSockets: any table reads without panic into clean,
// absolute, distinct paths that occur in it.
func FuzzParseUnixSockets(f *testing.F) {
	f.Add(unixTable)
	f.Add("header\n1 2 3 4 5 6 7 /a/../b\n")
	f.Fuzz(func(t *testing.T, table string) {
		seen := map[string]bool{}
		for _, p := range parseUnixSockets(strings.NewReader(table)) {
			require.True(t, filepath.IsAbs(p), p)
			require.Equal(t, filepath.Clean(p), p)
			require.False(t, seen[p], "distinct")
			seen[p] = true
		}
	})
}

func TestKernelVersion(t *testing.T) {
	for release, want := range map[string][2]int{"6.18.44-fc-v1294": {6, 18}, "6.14.0": {6, 14}, "5.15.0-91-generic": {5, 15}, "6.1": {6, 1}, "10.2rc1": {10, 2}} {
		major, minor, ok := kernelVersion(release)
		require.True(t, ok, release)
		assert.Equal(t, want, [2]int{major, minor}, release)
	}
	for _, bad := range []string{"", "6", "x.y", "6.", ".5"} {
		_, _, ok := kernelVersion(bad)
		assert.False(t, ok, bad)
	}
}

// FuzzKernelVersion: a release string reads without panic, and one made
// of two numbers reads back as them.
func FuzzKernelVersion(f *testing.F) {
	f.Add("6.18.44-fc-v1294", 6, 18)
	f.Add("5.4", 5, 4)
	f.Fuzz(func(t *testing.T, release string, major, minor int) {
		kernelVersion(release)
		if major < 0 || minor < 0 {
			return
		}
		m, n, ok := kernelVersion(fmt.Sprintf("%d.%d.0-x", major, minor))
		require.True(t, ok)
		require.Equal(t, [2]int{major, minor}, [2]int{m, n})
	})
}
