package spill_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

// newDir returns a Dir store, failing the test on an invalid option.
func newDir(t testing.TB, dir string, opts ...spill.StoreOption) spill.Store {
	t.Helper()
	d, err := spill.NewDir(dir, opts...)
	require.NoError(t, err)
	return d
}

// newMemory returns a NewMemory store, failing the test on an invalid option.
func newMemory(t testing.TB, opts ...spill.StoreOption) spill.Store {
	t.Helper()
	m, err := spill.NewMemory(opts...)
	require.NoError(t, err)
	return m
}

// middleware returns the spill middleware, failing the test on an
// invalid option.
func middleware(t testing.TB, opts ...spill.Option) tools.Middleware {
	t.Helper()
	mw, err := spill.Middleware(opts...)
	require.NoError(t, err)
	return mw
}
