package shell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/longtest"
)

// TestPlanPinsByName: the directories above a path denied by an anchored
// pattern are pinned; those above one denied by its name alone (.env) are
// not, as renaming them keeps it denied; the masks are the same.
func TestPlanPinsByName(t *testing.T) {
	needBwrap(t)
	a := newArena(t, nil)
	require.NoError(t, os.MkdirAll(filepath.Join(a.ws, "x/y"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(a.ws, "x/y/.env"), []byte("E\n"), 0o644))
	plan, err := a.sb.(*bubblewrap).plan(context.Background())
	require.NoError(t, err)
	assert.Contains(t, plan.pins, filepath.Join(a.ws, "a"))
	assert.Contains(t, plan.pins, filepath.Join(a.ws, "a/b"))
	assert.NotContains(t, plan.pins, filepath.Join(a.ws, "sub"))
	assert.NotContains(t, plan.pins, filepath.Join(a.ws, "x"))
	assert.NotContains(t, plan.pins, filepath.Join(a.ws, "x/y"))
	assert.Contains(t, plan.maskFiles, filepath.Join(a.ws, "sub/.env"))
	assert.Contains(t, plan.maskFiles, filepath.Join(a.ws, "x/y/.env"))
	assert.Contains(t, plan.maskDirs, filepath.Join(a.ws, "a/b/priv"))
}

// TestSandboxRenameAboveNameDenied: a command that renames the directory
// above a file denied by its name still cannot read it, in that command or
// the next, and the file keeps its denied name on the host.
func TestSandboxRenameAboveNameDenied(t *testing.T) {
	needBwrap(t)
	a := newArena(t, nil)
	out := a.run(t, `mv sub moved 2>&1; cat moved/.env; cp moved/.env /tmp/e 2>&1; cat /tmp/e; ln -s moved/.env l; cat l; ls moved`, 0)
	assert.NotContains(t, out, attackSecret)
	assert.Equal(t, "TOKEN="+attackSecret+"\n", a.read(t, "moved/.env"), "the secret keeps its name")
	out = a.run(t, `cat moved/.env l; mv moved/.env moved/env 2>&1; cat moved/env 2>&1; grep -r TOPSECRET moved`, 0)
	assert.NotContains(t, out, attackSecret)
	assert.Equal(t, "TOKEN="+attackSecret+"\n", a.read(t, "moved/.env"))
}

// TestSandboxMasksWhatAppearsBetweenCommands: a denied file made on the
// host right after a command (while the tools look at the workspace in the
// background), in directories the last look listed, is masked from the
// very next command, every time.
func TestSandboxMasksWhatAppearsBetweenCommands(t *testing.T) {
	needBwrap(t)
	a := newArena(t, nil)
	rounds := longtest.Pick(8, 100)
	dirs := []string{"sub", "a/b", ".", "a/b/new"}
	for i := range rounds {
		rel := filepath.Join(dirs[i%len(dirs)], ".env")
		if i%3 == 2 {
			rel = fmt.Sprintf("secrets/n%d.txt", i)
		}
		var cmd string
		if i%2 == 0 {
			cmd = "true"
		} else {
			cmd = "ls -R >/dev/null"
		}
		a.run(t, cmd, 0)
		full := filepath.Join(a.ws, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(attackSecret+" new\n"), 0o644))
		out := a.run(t, "cat "+rel+"; grep -r TOPSECRET . 2>/dev/null", 0)
		if !assert.NotContains(t, out, attackSecret, "round %d: %s", i, rel) {
			return
		}
		if !slices.Contains([]string{"sub/.env"}, rel) {
			require.NoError(t, os.Remove(full))
		}
	}
}
