package compact_test

import (
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/compact"
)

func FuzzSplit(f *testing.F) {
	f.Add([]byte{0, 1, 2, 2, 1, 2, 0, 1}, int64(3))
	f.Add([]byte{0}, int64(0))
	f.Fuzz(func(t *testing.T, roles []byte, keep int64) {
		roleOf := []harness.Role{harness.RoleUser, harness.RoleAssistant, harness.RoleTool}
		msgs := make([]harness.Message, len(roles))
		for i, r := range roles {
			msgs[i] = harness.Message{Role: roleOf[int(r)%3]}
		}
		split := compact.Split(msgs, keep, func(int) int64 { return 1 })
		if split == 0 {
			return
		}
		if split < 0 || split >= len(msgs) {
			t.Fatalf("split %d out of range for %d messages", split, len(msgs))
		}
		if msgs[split].Role == harness.RoleTool {
			t.Fatalf("split at a tool result separates it from its call: %v at %d", roles, split)
		}
	})
}
