package spill_test

import (
	"context"
	"fmt"
	iofs "io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/spill/spilltest"
	"github.com/go-harness/harness/tools"
)

func TestDirConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return newDir(t, t.TempDir()) })
}

func TestMemoryConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return newMemory(t) })
}

func TestDirBudget(t *testing.T) {
	spilltest.TestStoreBudget(t, func(t *testing.T, budget int64) spill.Store {
		return newDir(t, t.TempDir(), spill.WithSessionBudget(budget))
	})
}

func TestMemoryBudget(t *testing.T) {
	spilltest.TestStoreBudget(t, func(t *testing.T, budget int64) spill.Store {
		return newMemory(t, spill.WithSessionBudget(budget))
	})
}

func TestStoreOptionErrors(t *testing.T) {
	for _, n := range []int64{0, -1, -(1 << 40)} {
		d, err := spill.NewDir(t.TempDir(), spill.WithSessionBudget(n))
		require.ErrorIs(t, err, harness.CodeInvalidOption, "dir, budget %d", n)
		assert.Nil(t, d)
		assert.Contains(t, err.Error(), fmt.Sprintf("WithSessionBudget(%d)", n))
		m, err := spill.NewMemory(spill.WithSessionBudget(n))
		require.ErrorIs(t, err, harness.CodeInvalidOption, "memory, budget %d", n)
		assert.Nil(t, m)
	}
	_, err := spill.NewDir("")
	assert.ErrorIs(t, err, harness.CodeInvalidOption, "a Dir needs a directory")
	assert.Equal(t, spill.DefaultSessionBudget, spill.SessionBudgetOf(newDir(t, t.TempDir())))
	assert.Equal(t, int64(4<<30), spill.SessionBudgetOf(newMemory(t)))
	assert.Equal(t, int64(1), spill.SessionBudgetOf(newMemory(t, spill.WithSessionBudget(1))))
}

func TestNotFoundMatchesFS(t *testing.T) {
	_, err := newMemory(t).Open(context.Background(), tools.OutputScheme+"nope")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.ErrorIs(t, err, iofs.ErrNotExist)
	assert.Equal(t, harness.CodeNotFound, harness.CodeOf(err))
}
