package observe_test

import (
	"context"
	"iter"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

// redact is a model middleware that replaces secret in every text block
// of the request, copying what it changes.
func redact(secret string) model.Middleware {
	return func(next model.Model) model.Model {
		return model.Wrap(next, func(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
			r := *req
			r.Messages = make([]harness.Message, len(req.Messages))
			for i, m := range req.Messages {
				m.Content = append([]harness.Block(nil), m.Content...)
				for j, b := range m.Content {
					if b.Type == harness.BlockText {
						m.Content[j].Text = strings.ReplaceAll(b.Text, secret, "[redacted]")
					}
				}
				r.Messages[i] = m
			}
			return next.Stream(ctx, &r)
		})
	}
}
