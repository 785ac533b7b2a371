package spill_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

// newDir returns a Dir store, failing the test on an invalid option.
func newDir(t testing.TB, dir string, cfg spill.StoreConfig) spill.Store {
	t.Helper()
	d, err := spill.NewDir(dir, cfg)
	require.NoError(t, err)
	return d
}

// newMemory returns a NewMemory store, failing the test on an invalid option.
func newMemory(t testing.TB, cfg spill.StoreConfig) spill.Store {
	t.Helper()
	m, err := spill.NewMemory(cfg)
	require.NoError(t, err)
	return m
}

// middleware returns the spill middleware, failing the test on an
// invalid option.
func middleware(t testing.TB, cfg spill.Config) tools.Middleware {
	t.Helper()
	mw, err := spill.Middleware(cfg)
	require.NoError(t, err)
	return mw
}
