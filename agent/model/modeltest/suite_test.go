package modeltest

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
)

// The scripted double passes the whole suite.
func TestScriptedModelConforms(t *testing.T) {
	TestModel(t, func(t *testing.T) model.Model {
		return replay.NewScripted(
			replay.Response{Text: "hello"},
			replay.Response{Text: "hello"},
			replay.Response{Text: "hello"},
			replay.Response{Text: "hello"},
		)
	})
}

// fake is a Model whose answer is a fixed sequence, for the broken models
// the checks must catch.
type fake struct {
	info model.Info
	// answer is what Stream yields, given the context and the request.
	answer func(ctx context.Context, req *model.Request) []item
}

func (f *fake) Info() model.Info { return f.info }

func (f *fake) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for _, it := range f.answer(ctx, req) {
			if !yield(it.chunk, it.err) {
				return
			}
		}
	}
}

func text(s string) item   { return item{chunk: model.Chunk{Type: model.ChunkText, Text: s}} }
func finish(r string) item { return item{chunk: model.Chunk{Type: model.ChunkFinish, Finish: r}} }

// honest answers well and honours cancellation.
func honest(ctx context.Context, _ *model.Request) []item {
	if err := ctx.Err(); err != nil {
		return []item{{err: model.NewError(harness.CodeAborted, "cancelled", err)}}
	}
	return []item{text("hello"), finish(model.FinishStop)}
}

func TestHonestFakeConforms(t *testing.T) {
	TestModel(t, func(t *testing.T) model.Model { return &fake{info: model.Info{Name: "fake"}, answer: honest} })
}

// Each broken model is caught by the check named, with a message that
// says what is wrong.
func TestChecksCatchBrokenModels(t *testing.T) {
	shared := []harness.Modality{harness.ModalityText, harness.ModalityImage}
	for _, tc := range []struct {
		name  string
		check string
		model *fake
		want  string
	}{
		{"no name", "info", &fake{answer: honest}, "Info().Name is empty"},
		{"shared input", "info", &fake{info: model.Info{Name: "m", Input: shared}, answer: honest}, "Info().Input is shared"},
		{"no finish", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{text("hello")}
		}}, "not the finish chunk"},
		{"nothing", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item { return nil }}, "yielded nothing"},
		{"after finish", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{finish(model.FinishStop), text("more")}
		}}, "must be last"},
		{"after error", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{{err: model.NewError(harness.CodeServer, "boom", nil)}, finish(model.FinishStop)}
		}}, "an error must end it"},
		{"aborted finish", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{text("hi"), finish(model.FinishAborted)}
		}}, "only the loop logs"},
		{"two fields", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{{chunk: model.Chunk{Type: model.ChunkText, Text: "hi", Finish: "stop"}}, finish(model.FinishStop)}
		}}, "sets other fields"},
		{"signature on text", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{{chunk: model.Chunk{Type: model.ChunkText, Text: "hi", Signature: "s"}}, finish(model.FinishStop)}
		}}, "only reasoning chunks have"},
		{"redacted with text", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{{chunk: model.Chunk{Type: model.ChunkReasoning, Text: "x", Redacted: true, Signature: "d"}}, text("hi"), finish(model.FinishStop)}
		}}, "redacted reasoning chunk"},
		{"late model chunk", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{text("hi"), {chunk: model.Chunk{Type: model.ChunkModel, Text: "other"}}, finish(model.FinishStop)}
		}}, "a model chunk comes first"},
		{"empty model chunk", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{{chunk: model.Chunk{Type: model.ChunkModel}}, text("hi"), finish(model.FinishStop)}
		}}, "names no model"},
		{"unknown type", "answer", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{{chunk: model.Chunk{Type: 42}}, finish(model.FinishStop)}
		}}, "unknown chunk type 42"},
		{"changes the request", "answer", &fake{info: model.Info{Name: "m"}, answer: func(_ context.Context, req *model.Request) []item {
			req.System = "rewritten"
			return []item{text("hi"), finish(model.FinishStop)}
		}}, "changed the request"},
		{"ignores cancellation", "cancelled", &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item {
			return []item{text("hi"), finish(model.FinishStop)}
		}}, "ended without an error"},
		{"wrong code on cancel", "cancelled", &fake{info: model.Info{Name: "m"}, answer: func(ctx context.Context, _ *model.Request) []item {
			return []item{{err: model.NewError(harness.CodeTransport, "lost", ctx.Err())}}
		}}, `code "transport"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var run func(context.Context, model.Model) error
			for _, c := range checks() {
				if c.name == tc.check {
					run = c.run
				}
			}
			require.NotNil(t, run, "no check %q", tc.check)
			err := run(context.Background(), tc.model)
			require.Error(t, err, "the %s check passed a broken model", tc.check)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A consumer that stops early needs something to stop at.
func TestStopEarlyNeedsAnAnswer(t *testing.T) {
	err := checkStopEarly(context.Background(), &fake{info: model.Info{Name: "m"}, answer: func(context.Context, *model.Request) []item { return nil }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "yielded nothing")
}
