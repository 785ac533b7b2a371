package harness

import "strings"

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

// Text returns the text blocks of m concatenated, without reasoning.
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
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

// Block is one piece of a message or of a tool result: text, reasoning,
// an image reference, a tool call or a tool result. Only the field its
// Type names is set. A tool result's content and a user message hold text
// and image blocks.
type Block struct {
	Type BlockType `json:"type"`
	// Text holds the text of text and reasoning blocks.
	Text string `json:"text,omitempty"`
	// Signature is what the provider returned with a reasoning block to
	// authenticate it (Anthropic's thinking signature); it goes back
	// with the block unchanged. A Redacted reasoning block has no Text:
	// Signature holds the reasoning the provider encrypted, as opaque
	// data to send back.
	Signature  string      `json:"signature,omitempty"`
	Redacted   bool        `json:"redacted,omitempty"`
	Image      *Image      `json:"image,omitempty"`
	ToolCall   *ToolCall   `json:"tool_call,omitempty"`
	ToolResult *ToolResult `json:"tool_result,omitempty"`
}

// TextBlock returns a text block. An image block is the literal
// Block{Type: BlockImage, Image: &img}.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// Image refers to an image held in an attachment store. The session log
// keeps the reference; the bytes are fetched by digest when a request is
// built for a model that accepts images.
type Image struct {
	// Digest is "sha256:<hex>" of the stored bytes.
	Digest string `json:"digest"`
	// MediaType is the stored encoding, such as "image/png".
	MediaType string `json:"media_type"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
	// Size is the stored byte count.
	Size int64 `json:"size,omitempty"`
	// Name says where the image came from (a path), for placeholders.
	Name string `json:"name,omitempty"`
}

// ToolCall is a call the model made.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text exactly as the model produced it, which
	// may be malformed; it is sent back unchanged.
	Arguments string `json:"arguments"`
}
