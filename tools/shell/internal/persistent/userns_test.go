//go:build linux

package persistent

import (
	"testing"

	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// TestUserNamespaceUnprivileged runs this test binary again as nobody,
// where a PID namespace can only be made inside a user namespace, and
// checks that the escapes from a persistent shell are contained there
// too.
func TestUserNamespaceUnprivileged(t *testing.T) {
	shelltest.RunUnprivileged(t, "TestUnprivilegedHelper")
}

// TestUnprivilegedHelper runs, as nobody, escapes against shell_close.
func TestUnprivilegedHelper(t *testing.T) {
	shelltest.UnprivilegedHelper(t, stopPaths, "shell_close")
}
