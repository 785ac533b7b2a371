package session

import (
	"github.com/go-harness/harness"
)

// Role is who a message is from.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool messages carry exactly one tool result block.
	RoleTool Role = "tool"
)

// Message is one provider-neutral message of a conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// BlockType says which field of a [Block] is set.
type BlockType string

// Block types.
const (
	BlockText       BlockType = "text"
	BlockReasoning  BlockType = "reasoning"
	BlockImage      BlockType = "image"
	BlockToolCall   BlockType = "tool_call"
	BlockToolResult BlockType = "tool_result"
)

// Block is one piece of a message: text, reasoning, an image reference, a
// tool call or a tool result.
type Block struct {
	Type BlockType `json:"type"`
	// Text holds the text of text and reasoning blocks.
	Text       string         `json:"text,omitempty"`
	Image      *harness.Image `json:"image,omitempty"`
	ToolCall   *ToolCall      `json:"tool_call,omitempty"`
	ToolResult *ToolResult    `json:"tool_result,omitempty"`
}

// ToolCall is a call the model made.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text exactly as the model produced it, which
	// may be malformed; it is sent back unchanged.
	Arguments string `json:"arguments"`
}

// ToolResult is the answer to one tool call as the model sees it.
type ToolResult struct {
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Content []harness.Block `json:"content"`
	IsError bool            `json:"is_error,omitempty"`
	Code    harness.Code    `json:"code,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// Text returns the text blocks of m joined, without reasoning.
func (m Message) Text() string {
	var s string
	for _, b := range m.Content {
		if b.Type == BlockText {
			s += b.Text
		}
	}
	return s
}

// ToolCalls returns the tool calls of m in order.
func (m Message) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, b := range m.Content {
		if b.Type == BlockToolCall && b.ToolCall != nil {
			out = append(out, *b.ToolCall)
		}
	}
	return out
}

// ContentBlocks converts tool content (text and images) to message blocks.
func ContentBlocks(cs []harness.Block) []Block {
	out := make([]Block, 0, len(cs))
	for _, c := range cs {
		switch c.Type {
		case harness.BlockImage:
			out = append(out, Block{Type: BlockImage, Image: c.Image})
		default:
			out = append(out, Block{Type: BlockText, Text: c.Text})
		}
	}
	return out
}

// Usage counts the tokens of one model call or a sum of calls.
type Usage struct {
	// InputTokens counts every prompt token, cached or not.
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens counts every completion token, reasoning included.
	OutputTokens int64 `json:"output_tokens"`
	// CacheHitTokens and CacheMissTokens split InputTokens where the
	// provider reports prefix-cache use.
	CacheHitTokens  int64 `json:"cache_hit_tokens,omitempty"`
	CacheMissTokens int64 `json:"cache_miss_tokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens spent on reasoning.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheHitTokens += o.CacheHitTokens
	u.CacheMissTokens += o.CacheMissTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// Total returns input plus output tokens.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }
