package session_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/go-harness/harness"

// deps returns the packages pkg imports, directly or not, as go list
// -deps reports them.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the imports with")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	require.NoError(t, err, "go list -deps %s", pkg)
	return strings.Fields(string(out))
}

// The log and the vocabulary are the bottom of the module: what they
// import of it is only the vocabulary itself and internal helpers, never
// a package above them, and no JSON Schema library.
func TestImportsStayBelow(t *testing.T) {
	for _, tc := range []struct {
		pkg string
		// allowed reports whether a package of the module may be imported.
		allowed func(string) bool
	}{
		{module, func(p string) bool { return p == module }},
		{module + "/session", func(p string) bool {
			return p == module || p == module+"/session" ||
				strings.HasPrefix(p, module+"/internal/") ||
				strings.HasPrefix(p, module+"/session/internal/")
		}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			all := deps(t, tc.pkg)
			require.Contains(t, all, tc.pkg)
			for _, p := range all {
				assert.NotContains(t, p, "jsonschema", "%s must not pull in a JSON Schema library", tc.pkg)
				if p == module || strings.HasPrefix(p, module+"/") {
					assert.True(t, tc.allowed(p), "%s imports %s, a package above it", tc.pkg, p)
				}
			}
		})
	}
}
