package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/tools"
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
	// Chunks, when set, are yielded as they are instead of the fields
	// above: for testing how the loop handles odd streams.
	Chunks []agent.Chunk
	// Err is yielded after the chunks, ending the answer with a failure.
	Err error
	// Hang makes the answer block after its chunks until the request's
	// context ends, then yield the context's error.
	Hang bool
	// Respond, when set, computes the answer from the request instead.
	Respond func(req *agent.Request) Response
}

// Say returns a response with text only.
func Say(text string) Response { return Response{Text: text} }

// Call returns a response that calls tools; pass name, arguments pairs
// with arguments as any JSON-encodable value or a raw JSON string.
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

// Scripted is a model that answers from a queue of canned responses and
// keeps every request it received, for unit tests. It is safe for
// concurrent use.
type Scripted struct {
	info agent.ModelInfo

	mu        sync.Mutex
	responses []Response
	requests  []*agent.Request
}

// NewScripted returns a scripted model named "scripted" that answers with
// responses in order.
func NewScripted(responses ...Response) *Scripted {
	return &Scripted{info: agent.ModelInfo{Name: "scripted"}, responses: responses}
}

// WithInfo sets the model info the scripted model reports.
func (s *Scripted) WithInfo(info agent.ModelInfo) *Scripted {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = info
	return s
}

// Push appends responses to the queue.
func (s *Scripted) Push(responses ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responses = append(s.responses, responses...)
}

// Requests returns the requests received so far, oldest first.
func (s *Scripted) Requests() []*agent.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*agent.Request(nil), s.requests...)
}

// Remaining returns how many responses are left.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.responses)
}

// Info implements agent.Model.
func (s *Scripted) Info() agent.ModelInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// Stream implements agent.Model.
func (s *Scripted) Stream(ctx context.Context, req *agent.Request) iter.Seq2[agent.Chunk, error] {
	return func(yield func(agent.Chunk, error) bool) {
		s.mu.Lock()
		s.requests = append(s.requests, cloneRequest(req))
		n := len(s.requests)
		if len(s.responses) == 0 {
			s.mu.Unlock()
			yield(agent.Chunk{}, fmt.Errorf("replay: scripted model has no response left for call %d", n))
			return
		}
		r := s.responses[0]
		s.responses = s.responses[1:]
		s.mu.Unlock()
		if r.Respond != nil {
			r = r.Respond(req)
		}
		emit(ctx, r, yield)
	}
}

// emit yields a response's chunks.
func emit(ctx context.Context, r Response, yield func(agent.Chunk, error) bool) {
	chunks := r.Chunks
	if chunks == nil {
		chunks = Chunks(r)
	}
	for _, c := range chunks {
		if err := ctx.Err(); err != nil {
			yield(agent.Chunk{}, err)
			return
		}
		if !yield(c, nil) {
			return
		}
	}
	if r.Hang {
		<-ctx.Done()
		yield(agent.Chunk{}, ctx.Err())
		return
	}
	if r.Err != nil {
		yield(agent.Chunk{}, r.Err)
	}
}

// Chunks returns the stream chunks a model would send for r: reasoning,
// text, each tool call in two pieces, usage, and the finish reason (no
// finish reason when r.Err is set, as a failed stream has none).
func Chunks(r Response) []agent.Chunk {
	var out []agent.Chunk
	if r.Reasoning != "" {
		out = append(out, agent.Chunk{Type: agent.ChunkReasoning, Text: r.Reasoning})
	}
	if r.Text != "" {
		out = append(out, agent.Chunk{Type: agent.ChunkText, Text: r.Text})
	}
	for i, tc := range r.ToolCalls {
		half := len(tc.Arguments) / 2
		out = append(out,
			agent.Chunk{Type: agent.ChunkToolCall, ToolCall: agent.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments[:half]}},
			agent.Chunk{Type: agent.ChunkToolCall, ToolCall: agent.ToolCallDelta{Index: i, Arguments: tc.Arguments[half:]}})
	}
	if r.Usage != nil {
		out = append(out, agent.Chunk{Type: agent.ChunkUsage, Usage: *r.Usage})
	}
	if r.Err == nil && !r.Hang {
		finish := r.Finish
		if finish == "" {
			finish = agent.FinishStop
			if len(r.ToolCalls) > 0 {
				finish = agent.FinishToolCalls
			}
		}
		out = append(out, agent.Chunk{Type: agent.ChunkFinish, Finish: finish})
	}
	return out
}

func cloneRequest(r *agent.Request) *agent.Request {
	c := *r
	c.Messages = append([]harness.Message(nil), r.Messages...)
	c.Tools = append([]tools.Spec(nil), r.Tools...)
	return &c
}
