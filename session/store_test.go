package session_test

import (
	"testing"

	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/sessiontest"
)

func TestJSONLConformance(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T) session.Store { return session.NewJSONL(t.TempDir()) })
}

func TestMemoryConformance(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T) session.Store { return session.NewMemory() })
}
