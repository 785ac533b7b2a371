//go:build linux

package shell

import (
	"testing"

	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// TestUserNamespaceUnprivileged covers the user-namespace path: run as
// root, it runs this test binary again as nobody (65534), where a PID
// namespace can only be made inside a user namespace, and checks that
// the escapes are contained there too.
func TestUserNamespaceUnprivileged(t *testing.T) {
	shelltest.RunUnprivileged(t, "TestUnprivilegedHelper")
}

// TestUnprivilegedHelper runs, as nobody, escapes against two stop paths
// and checks that they run in a PID namespace made inside a user
// namespace.
func TestUnprivilegedHelper(t *testing.T) {
	shelltest.UnprivilegedHelper(t, stopPaths, "bash cancel", "bash exit")
}
