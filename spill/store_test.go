package spill_test

import (
	"testing"

	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/spill/spilltest"
)

func TestDirConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return spill.NewDir(t.TempDir()) })
}

func TestMemoryConformance(t *testing.T) {
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return spill.NewMemory() })
}
