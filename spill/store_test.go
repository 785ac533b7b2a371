package spill_test

import (
	"context"
	iofs "io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/spill/spilltest"
	"github.com/go-harness/harness/tools"
)

func TestDirConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return spill.NewDir(t.TempDir()) })
}

func TestMemoryConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return spill.NewMemory() })
}

func TestDirBudget(t *testing.T) {
	spilltest.TestStoreBudget(t, func(t *testing.T, budget int64) spill.Store {
		return spill.NewDir(t.TempDir(), spill.WithSessionBudget(budget))
	})
}

func TestMemoryBudget(t *testing.T) {
	spilltest.TestStoreBudget(t, func(t *testing.T, budget int64) spill.Store {
		return spill.NewMemory(spill.WithSessionBudget(budget))
	})
}

func TestStoreOptionErrors(t *testing.T) {
	for _, n := range []int64{0, -1, -(1 << 40)} {
		for name, s := range map[string]interface {
			spill.Store
			Err() error
		}{
			"dir":    spill.NewDir(t.TempDir(), spill.WithSessionBudget(n)),
			"memory": spill.NewMemory(spill.WithSessionBudget(n)),
		} {
			require.ErrorIs(t, s.Err(), harness.CodeInvalidOption, "%s, budget %d", name, n)
			_, err := s.Save(context.Background(), tools.Owner{Session: "s"}, strings.NewReader("x"))
			assert.ErrorIs(t, err, harness.CodeInvalidOption, "%s: Save reports it", name)
		}
	}
	assert.Equal(t, spill.DefaultSessionBudget, spill.NewDir(t.TempDir()).SessionBudget())
	assert.Equal(t, int64(4<<30), spill.NewMemory().SessionBudget())
	assert.NoError(t, spill.NewMemory(spill.WithSessionBudget(1)).Err())
}

func TestNotFoundMatchesFS(t *testing.T) {
	_, err := spill.NewMemory().Open(context.Background(), tools.OutputScheme+"nope")
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.ErrorIs(t, err, iofs.ErrNotExist)
	assert.Equal(t, harness.CodeNotFound, harness.CodeOf(err))
}
