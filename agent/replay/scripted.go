package replay

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

// Response is one canned model answer.
type Response struct {
	Reasoning string
	Text      string
	ToolCalls []harness.ToolCall
	Usage     *harness.Usage
	// Finish defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise.
	Finish string
	// Model, when set, names the model that answers, as a fallback
	// wrapper does when a fallback model answers: the answer begins with
	// a model.ChunkModel chunk (also before Chunks).
	Model string
	// Chunks, when set, are yielded as they are instead of the fields
	// above: for testing how the loop handles odd streams. Without them
	// the answer streams as a model's would: reasoning, text, each tool
	// call in two pieces (its id and name, then its arguments), usage,
	// and the finish reason (none when Err or Hang is set).
	Chunks []model.Chunk
	// Err is yielded after the chunks, ending the answer with a failure.
	Err error
	// Hang makes the answer block after its chunks until the request's
	// context ends, then yield the context's error.
	Hang bool
	// Respond, when set, computes the answer from the request instead.
	Respond func(req *model.Request) Response
}

// Call returns a response that calls the given tools, in order; build
// each call with ToolCall.
func Call(calls ...harness.ToolCall) Response { return Response{ToolCalls: calls} }

// ToolCall builds a call with a JSON-encoded argument object. A string
// args is used as the raw argument text.
func ToolCall(id, name string, args any) harness.ToolCall {
	var raw string
	switch a := args.(type) {
	case string:
		raw = a
	case nil:
		raw = "{}"
	default:
		b, err := json.Marshal(a)
		if err != nil {
			raw = fmt.Sprintf("%q", err.Error())
		} else {
			raw = string(b)
		}
	}
	return harness.ToolCall{ID: id, Name: name, Arguments: raw}
}

// emit yields a response's chunks.
func emit(ctx context.Context, r Response, yield func(model.Chunk, error) bool) {
	chunks := r.Chunks
	if chunks == nil {
		chunks = chunksOf(r)
	}
	if r.Model != "" {
		chunks = append([]model.Chunk{{Type: model.ChunkModel, Text: r.Model}}, chunks...)
	}
	for _, c := range chunks {
		if err := ctx.Err(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if !yield(c, nil) {
			return
		}
	}
	if r.Hang {
		<-ctx.Done()
		yield(model.Chunk{}, ctx.Err())
		return
	}
	if r.Err != nil {
		yield(model.Chunk{}, r.Err)
	}
}

// chunksOf returns the stream chunks a model would send for r:
// reasoning, text, each tool call in two pieces, usage, and the finish
// reason (none when r.Err is set, as a failed stream has none).
func chunksOf(r Response) []model.Chunk {
	var out []model.Chunk
	if r.Reasoning != "" {
		out = append(out, model.Chunk{Type: model.ChunkReasoning, Text: r.Reasoning})
	}
	if r.Text != "" {
		out = append(out, model.Chunk{Type: model.ChunkText, Text: r.Text})
	}
	for i, tc := range r.ToolCalls {
		half := len(tc.Arguments) / 2
		out = append(out,
			model.Chunk{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments[:half]}},
			model.Chunk{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: i, Arguments: tc.Arguments[half:]}})
	}
	if r.Usage != nil {
		out = append(out, model.Chunk{Type: model.ChunkUsage, Usage: *r.Usage})
	}
	if r.Err == nil && !r.Hang {
		finish := r.Finish
		if finish == "" {
			finish = model.FinishStop
			if len(r.ToolCalls) > 0 {
				finish = model.FinishToolCalls
			}
		}
		out = append(out, model.Chunk{Type: model.ChunkFinish, Finish: finish})
	}
	return out
}

func cloneRequest(r *model.Request) *model.Request {
	c := *r
	c.Messages = append([]harness.Message(nil), r.Messages...)
	c.Tools = append([]model.Tool(nil), r.Tools...)
	return &c
}
