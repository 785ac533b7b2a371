package model

import (
	"sort"
	"strings"

	"github.com/go-harness/harness"
)

// Assembler joins the chunks of one streamed answer into an assistant
// message. The agent loop assembles every answer with it; a host that
// runs model calls itself (a durable workflow, say) does the same.
//
// The message holds reasoning, then text, then the tool calls ordered by
// index, each call's argument pieces joined. Reasoning is one block, or
// several where the provider signs its blocks: a reasoning chunk with a
// signature ends the block it belongs to, and a redacted one is a block
// of its own. A signed block that arrived after tool calls began
// (thinking interleaved with tool use) keeps its place after those
// calls, since the provider checks the order of the blocks it signed.
//
// Assembly is linear in the size of the answer however finely it is cut:
// a call's arguments grow in a buffer, never by re-copying what arrived
// before. The zero value is ready to use.
type Assembler struct {
	// done are the reasoning blocks ended by a signature, with the
	// number of tool calls begun before each; reasoning is the text of
	// the one still open.
	done      []harness.Block
	doneAfter []int
	reasoning strings.Builder
	text      strings.Builder
	calls     map[int]*callParts
	usage     *harness.Usage
	finish    string
	finished  bool
	// model is the model a ChunkModel named.
	model string
}

// callParts is one tool call being assembled.
type callParts struct {
	id, name string
	args     strings.Builder
}

// Add applies one chunk.
func (a *Assembler) Add(c Chunk) {
	switch c.Type {
	case ChunkText:
		a.text.WriteString(c.Text)
	case ChunkReasoning:
		switch {
		case c.Redacted:
			a.closeReasoning("")
			a.done = append(a.done, harness.Block{Type: harness.BlockReasoning, Signature: c.Signature, Redacted: true})
			a.doneAfter = append(a.doneAfter, len(a.calls))
		case c.Signature != "":
			a.reasoning.WriteString(c.Text)
			a.closeReasoning(c.Signature)
		default:
			a.reasoning.WriteString(c.Text)
		}
	case ChunkModel:
		a.model = c.Text
	case ChunkToolCall:
		if a.calls == nil {
			a.calls = map[int]*callParts{}
		}
		tc, ok := a.calls[c.ToolCall.Index]
		if !ok {
			tc = &callParts{}
			a.calls[c.ToolCall.Index] = tc
		}
		if c.ToolCall.ID != "" {
			tc.id = c.ToolCall.ID
		}
		if c.ToolCall.Name != "" {
			tc.name = c.ToolCall.Name
		}
		tc.args.WriteString(c.ToolCall.Arguments)
	case ChunkUsage:
		u := c.Usage
		a.usage = &u
	case ChunkFinish:
		a.finish, a.finished = c.Finish, true
	}
}

// closeReasoning ends the open reasoning block with signature, if it
// has text or a signature.
func (a *Assembler) closeReasoning(signature string) {
	if a.reasoning.Len() == 0 && signature == "" {
		return
	}
	a.done = append(a.done, harness.Block{Type: harness.BlockReasoning, Text: a.reasoning.String(), Signature: signature})
	a.doneAfter = append(a.doneAfter, len(a.calls))
	a.reasoning.Reset()
}

// reasoningAfter appends the closed reasoning blocks that came after
// exactly n tool calls had begun.
func (a *Assembler) reasoningAfter(content []harness.Block, n int) []harness.Block {
	for i, b := range a.done {
		if a.doneAfter[i] == n {
			content = append(content, b)
		}
	}
	return content
}

// Message returns the assembled assistant message. Calls with no
// arguments get "{}".
func (a *Assembler) Message() harness.Message {
	m := harness.Message{Role: harness.RoleAssistant}
	m.Content = a.reasoningAfter(m.Content, 0)
	if a.reasoning.Len() > 0 {
		m.Content = append(m.Content, harness.Block{Type: harness.BlockReasoning, Text: a.reasoning.String()})
	}
	if a.text.Len() > 0 {
		m.Content = append(m.Content, harness.TextBlock(a.text.String()))
	}
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for n, i := range idx {
		p := a.calls[i]
		tc := &harness.ToolCall{ID: p.id, Name: p.name, Arguments: p.args.String()}
		if strings.TrimSpace(tc.Arguments) == "" {
			tc.Arguments = "{}"
		}
		m.Content = append(m.Content, harness.Block{Type: harness.BlockToolCall, ToolCall: tc})
		m.Content = a.reasoningAfter(m.Content, n+1)
	}
	return m
}

// Model returns the model a ChunkModel named, or "" when none did: the
// answer is the called model's.
func (a *Assembler) Model() string { return a.model }

// Usage returns the last usage reported, if any.
func (a *Assembler) Usage() (harness.Usage, bool) {
	if a.usage == nil {
		return harness.Usage{}, false
	}
	return *a.usage, true
}

// Finish returns the finish reason and whether one arrived. An answer
// without one was cut off.
func (a *Assembler) Finish() (string, bool) { return a.finish, a.finished }

// Empty reports whether nothing but reasoning arrived: no text and no
// tool calls.
func (a *Assembler) Empty() bool { return a.text.Len() == 0 && len(a.calls) == 0 }

// Err reports an answer that cannot be used though its stream ended
// without an error: one with no finish reason (harness.CodeTruncatedStream)
// and one with neither text nor tool calls that was not cut off by the
// output limit (harness.CodeEmptyResponse). Both codes are retryable
// (Retryable). It returns nil for a usable answer.
func (a *Assembler) Err() error {
	if !a.finished {
		return NewError(harness.CodeTruncatedStream, "the answer stream ended without a finish reason", nil)
	}
	if a.Empty() && a.finish != FinishLength {
		return NewError(harness.CodeEmptyResponse, "the model answered with no text and no tool calls", nil)
	}
	return nil
}
