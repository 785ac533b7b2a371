package spill

import (
	"context"
	"errors"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/spillwriter"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// Config configures the spill policy ([Middleware]). The zero value is
// the default.
type Config struct {
	// Threshold is the largest result text, in bytes, that reaches the
	// model whole; 0 means 30,000. A threshold below 1,024, the room a
	// preview needs for a useful head and tail beside its notice, is an
	// error of Middleware.
	Threshold int
}

type policy struct {
	threshold int
}

// Middleware returns the spill policy as dispatch middleware, or an error
// (harness.CodeInvalidOption) for an invalid Config. A result whose text
// is longer than the threshold (30,000 bytes unless Config.Threshold
// says otherwise) is saved whole to the output store and
// replaced, for the model, by a preview of at most the threshold: the
// head and the tail of the text, cut at line boundaries where possible and
// never inside a UTF-8 sequence, and between them a notice with the exact
// number of bytes omitted, the lines they span, the locator of the saved
// output and how to read it with the read tool's offset and limit.
//
// Error results are spilled like any other; images, the error flag and code,
// render data and file records are kept as they are. Calls whose tool declares
// Spec.NeverSpill (the tool that reads spilled output back) are never spilled.
// When saving fails, or no store is configured, the result stays whole and the
// failure is logged: spilling never turns a success into an error. The one
// exception is a session past its spill budget (harness.CodeSpillBudget): its
// long results are still cut to the preview, whose notice says the output was
// not saved and why, so that a runaway session cannot grow the model's context
// without bound either.
//
// Put it outside the deadline middleware (first in the loop's middleware
// list), so that saving is not charged to a tool's deadline and results
// cut off by a deadline are still spilled.
func Middleware(cfg Config) (tools.Middleware, error) {
	p := &policy{threshold: spillwriter.DefaultThreshold}
	if cfg.Threshold != 0 {
		if cfg.Threshold < spillwriter.MinThreshold {
			return nil, toolexec.OptionError("spill: Config.Threshold is %d: the threshold is at least %d bytes, the room a preview needs (0 means the default)", cfg.Threshold, spillwriter.MinThreshold)
		}
		p.threshold = cfg.Threshold
	}
	return func(next tools.Handler) tools.Handler {
		return tools.Handler(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
			res := next(ctx, call)
			if res == nil || call.Spec.NeverSpill {
				return res
			}
			return p.apply(ctx, call, res)
		})
	}, nil
}

func (p *policy) apply(ctx context.Context, call *tools.Call, res *harness.ToolResult) *harness.ToolResult {
	text := res.Text()
	if len(text) <= p.threshold {
		return res
	}
	logger := toolexec.Logger(call.Env)
	var store tools.OutputStore
	if call.Env != nil {
		store = call.Env.Output
	}
	if store == nil {
		logger.Warn("tool output over the spill threshold kept whole: no output store is configured",
			"tool", call.Name, "call_id", call.ID, "bytes", len(text), "threshold", p.threshold)
		return res
	}
	// The save outlives a cancelled turn: the result is logged either way,
	// and it should be logged small.
	st, err := store.Save(context.WithoutCancel(ctx), ownerOf(call), strings.NewReader(text))
	switch {
	case errors.Is(err, harness.CodeSpillBudget):
		// The session has kept all the output it may: the output is cut
		// to its preview anyway, which says it was not saved and why.
		logger.Warn("a large tool output was not saved: the session's spill budget is used up; the model gets its head and tail only",
			"tool", call.Name, "call_id", call.ID, "bytes", len(text), "error", err)
	case err != nil:
		logger.Error("saving a large tool output failed; keeping it whole",
			"tool", call.Name, "call_id", call.ID, "bytes", len(text), "error", err)
		return res
	}
	pv, ok := spillwriter.BuildPreview(spillwriter.Source{Head: text, Tail: text, Size: int64(len(text)), Newlines: int64(strings.Count(text, "\n"))},
		p.threshold, st, err)
	if !ok {
		logger.Error("the spill notice does not fit the threshold; keeping the output whole",
			"tool", call.Name, "call_id", call.ID, "locator", st.Locator, "threshold", p.threshold)
		return res
	}
	if err == nil {
		logger.Debug("spilled a large tool output", "tool", call.Name, "call_id", call.ID,
			"bytes", len(text), "locator", st.Locator, "omitted", pv.Omitted)
	}
	out := *res
	out.Content = make([]harness.Block, 0, len(res.Content))
	placed := false
	for _, c := range res.Content {
		if c.Type == harness.BlockText {
			if !placed {
				out.Content = append(out.Content, harness.TextBlock(pv.Text))
				placed = true
			}
			continue
		}
		out.Content = append(out.Content, c)
	}
	return &out
}

// ownerOf returns the owner of a call's outputs: its session, tool and
// call id.
func ownerOf(call *tools.Call) tools.Owner {
	o := tools.Owner{Tool: call.Name, Call: call.ID}
	if call.Env != nil {
		o.Session = call.Env.SessionID
	}
	return o
}
