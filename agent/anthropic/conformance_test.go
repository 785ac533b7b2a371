package anthropic_test

import (
	"testing"

	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/model/modeltest"
)

// The adapter passes the conformance suite against the fake endpoint.
func TestModelConformance(t *testing.T) {
	modeltest.TestModel(t, func(t *testing.T) model.Model {
		f := newFake(t)
		for range 4 {
			f.Add(ok(block{Thinking: "Say hello.", Signature: "sig"}, text("Hello.")))
		}
		return f.model()
	})
}
