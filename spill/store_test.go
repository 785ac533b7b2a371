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
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return newDir(t, t.TempDir(), spill.StoreConfig{}) })
}

func TestMemoryConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return newMemory(t, spill.StoreConfig{}) })
}

func TestDirBudget(t *testing.T) {
	spilltest.TestStoreBudget(t, func(t *testing.T, budget int64) spill.Store {
		return newDir(t, t.TempDir(), spill.StoreConfig{SessionBudget: budget})
	})
}

func TestMemoryBudget(t *testing.T) {
	spilltest.TestStoreBudget(t, func(t *testing.T, budget int64) spill.Store {
		return newMemory(t, spill.StoreConfig{SessionBudget: budget})
	})
}

func TestStoreConfigErrors(t *testing.T) {
	for _, n := range []int64{-1, -(1 << 40)} {
		d, err := spill.NewDir(t.TempDir(), spill.StoreConfig{SessionBudget: n})
		require.ErrorIs(t, err, harness.CodeInvalidOption, "dir, budget %d", n)
		assert.Nil(t, d)
		assert.Contains(t, err.Error(), fmt.Sprintf("StoreConfig.SessionBudget is %d", n))
		m, err := spill.NewMemory(spill.StoreConfig{SessionBudget: n})
		require.ErrorIs(t, err, harness.CodeInvalidOption, "memory, budget %d", n)
		assert.Nil(t, m)
	}
	_, err := spill.NewDir("", spill.StoreConfig{})
	assert.ErrorIs(t, err, harness.CodeInvalidOption, "a Dir needs a directory")
	assert.Equal(t, spill.DefaultSessionBudget, spill.SessionBudgetOf(newDir(t, t.TempDir(), spill.StoreConfig{})))
	assert.Equal(t, int64(4<<30), spill.SessionBudgetOf(newMemory(t, spill.StoreConfig{})))
	assert.Equal(t, int64(1), spill.SessionBudgetOf(newMemory(t, spill.StoreConfig{SessionBudget: 1})))
}

func TestNotFoundMatchesFS(t *testing.T) {
	_, err := newMemory(t, spill.StoreConfig{}).Open(context.Background(), tools.OutputScheme+"nope")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.ErrorIs(t, err, iofs.ErrNotExist)
	assert.Equal(t, harness.CodeNotFound, harness.CodeOf(err))
}
