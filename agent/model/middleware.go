package model

import (
	"context"
	"iter"
)

// Middleware wraps a Model, as tools.Middleware wraps a tool handler
// and net/http middleware an http.Handler: it sees each request before
// it is sent and each chunk of the answer after, and may change or
// replace either (redact a secret, add context, audit, trace). A
// middleware must not modify the request it is given in place (its
// messages are the session's history): to change it, copy the Request
// and the slices it replaces. It keeps the contract of Model: one call
// is one attempt, and a failure is yielded once. agent.Hooks.Model
// applies a chain of them, the first given the outermost.
type Middleware func(next Model) Model

// Wrap returns a Model that describes itself as next does and streams
// with stream: the usual body of a Middleware.
//
//	redact := func(next model.Model) model.Model {
//		return model.Wrap(next, func(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
//			r := *req
//			r.System = strings.ReplaceAll(r.System, secret, "[redacted]")
//			return next.Stream(ctx, &r)
//		})
//	}
func Wrap(next Model, stream func(ctx context.Context, req *Request) iter.Seq2[Chunk, error]) Model {
	return &wrapped{next: next, stream: stream}
}

type wrapped struct {
	next   Model
	stream func(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

func (w *wrapped) Info() Info { return w.next.Info() }

func (w *wrapped) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return w.stream(ctx, req)
}

// Unwrap returns the wrapped model, so that a capability of an adapter
// (found by type assertion) stays reachable through middleware.
func (w *wrapped) Unwrap() Model { return w.next }
