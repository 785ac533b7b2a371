package shell

import (
	"errors"

	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

// withoutNamespace returns the default configuration with commands kept
// out of PID namespaces, giving reason as the cause; for tests of the
// other containment.
func withoutNamespace(reason string) *shellkit.Config {
	c := Config{}.resolve()
	c.NoNamespace = errors.New(reason)
	return c
}

// withoutCgroup returns the default configuration with commands kept
// out of cgroups, so that they run in PID namespaces where the system
// allows them.
func withoutCgroup() *shellkit.Config {
	c := Config{}.resolve()
	c.NoCgroup = true
	return c
}
