package spill_test

import (
	iofs "io/fs"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness/fs"

	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/spill/spilltest"
)

func TestDirConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return spill.NewDir(t.TempDir()) })
}

func TestMemoryConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return spill.NewMemory() })
}

func TestNotFoundMatchesFS(t *testing.T) {
	assert.ErrorIs(t, spill.ErrNotFound, fs.ErrNotFound)
	assert.ErrorIs(t, spill.ErrNotFound, iofs.ErrNotExist)
}
