//go:build linux

package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

// Bubblewrap starts nothing when it is made: the first command wrapped
// starts bwrap once to check it, and a failed check refuses that command
// and every later one (closed, never unconfined) without starting bwrap
// again (issue 38).
func TestBubblewrapProbesAtFirstCommand(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	fake := filepath.Join(dir, "bwrap")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho x >> '"+runs+"'\necho 'no user namespaces here' >&2\nexit 1\n"), 0o755))

	sb, err := Bubblewrap(BubblewrapConfig{Workspace: t.TempDir(), Path: fake})
	require.NoError(t, err)
	_, err = os.Stat(runs)
	assert.ErrorIs(t, err, os.ErrNotExist, "making the sandbox started bwrap")
	assert.Contains(t, sb.Describe(), "bubblewrap workspace-write")

	for range 2 {
		argv, err := sb.Wrap([]string{"/bin/bash", "-c", "true"}, "/")
		require.Error(t, err)
		assert.Nil(t, argv)
		assert.Equal(t, harness.CodeSandboxUnavailable, harness.CodeOf(err))
		assert.Contains(t, err.Error(), "no user namespaces here")
	}
	got, err := os.ReadFile(runs)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(got), "x"), "bwrap is checked once")
}
