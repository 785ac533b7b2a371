package model

import (
	"context"
	"iter"
	"slices"

	"github.com/go-harness/harness"
)

// Chain is a Model made of several that answer in turn: the first, and
// when it fails in a way another model may not, the next. [Fallback]
// returns one. The agent loop finds it by type assertion and drives the
// models itself: it retries each as its retry policy says, moves to the
// next only once those retries are spent, and logs which model answered.
type Chain interface {
	Model
	// Models returns the models of the chain, the first (primary) first.
	Models() []Model
}

// Fallback returns a Model that answers with primary, and when a call
// fails with a failure that is the model's and not the request's
// ([FallsBack]: a rate limit, an overloaded or failing server, a timeout
// or a broken connection, an empty or cut-off answer) with each of
// fallbacks in turn, on the same request. A failure the request causes
// (refused as invalid, too large, over the context window; a key the
// provider refuses; content withheld) and a cancelled call never fall
// back: the next model would fail alike, or the caller asked to stop.
// Nil models are skipped. Info describes primary.
//
// The value is a [Chain]: the agent loop retries each model as its
// retry policy says before it falls back, keeps the model that answered
// for the rest of the turn, records it on the logged answer and its
// usage (so the call is priced as that model's), and tells the host
// with an agent.ModelFallback event. Streamed by other code, a call
// falls back at once, as long as the failed model had sent nothing yet
// (a failure mid-answer is yielded, as from any model), and an answer of
// a fallback model begins with a ChunkModel chunk that names it.
//
// Wrap the Chain itself, not its models, in middleware given to the loop
// (agent.Hooks.Model): the loop applies the middleware to each model of
// a chain it is given.
func Fallback(primary Model, fallbacks ...Model) Model {
	models := make([]Model, 0, 1+len(fallbacks))
	for _, m := range append([]Model{primary}, fallbacks...) {
		if m != nil {
			models = append(models, m)
		}
	}
	return &chain{models: models}
}

// FallsBack reports whether a call that failed with err should be tried
// on another model: err is [Retryable], a failure of the model or of the
// way to it, not of the request.
func FallsBack(err error) bool { return Retryable(err) }

type chain struct{ models []Model }

func (c *chain) Models() []Model { return slices.Clone(c.models) }

func (c *chain) Info() Info {
	if len(c.models) == 0 {
		return Info{}
	}
	return c.models[0].Info()
}

func (c *chain) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for i, m := range c.models {
			sent := false
			var failed error
			for ch, err := range m.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				if !sent && i > 0 && !yield(Chunk{Type: ChunkModel, Text: m.Info().Name}, nil) {
					return
				}
				sent = true
				if !yield(ch, nil) {
					return
				}
			}
			switch {
			case failed == nil:
				return
			case ctx.Err() != nil && harness.CodeOf(failed) != harness.CodeAborted:
				yield(Chunk{}, NewError(harness.CodeAborted, "the model call was cancelled", ctx.Err()))
				return
			case sent || i == len(c.models)-1 || !FallsBack(failed) || ctx.Err() != nil:
				yield(Chunk{}, failed)
				return
			}
		}
		if len(c.models) == 0 {
			yield(Chunk{}, NewError(harness.CodeInvalidOption, "model.Fallback was given no model", nil))
		}
	}
}
