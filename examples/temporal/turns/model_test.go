package turns_test

import (
	"context"
	"iter"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

// failModel fails the test when it is called.
type failModel struct{ t *testing.T }

func failingModel(t *testing.T) model.Model { return failModel{t} }

func (m failModel) Info() model.Info { return model.Info{Name: "must-not-be-called"} }

func (m failModel) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	m.t.Error("the model was called for a step whose answer is logged")
	return func(yield func(model.Chunk, error) bool) {
		yield(model.Chunk{}, model.NewError(harness.CodeInvalidRequest, "not to be called", nil))
	}
}
