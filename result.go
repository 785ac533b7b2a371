package harness

import (
	"fmt"
	"strings"
)

// ToolResult is the outcome of one tool call: what a tool returns, what
// the session log keeps and, without Render and Files, what the model is
// shown.
//
// A tool leaves CallID and Name empty, and so does the session log's
// tool_result event, which names the call itself; they are set where the
// result is placed in a conversation, next to the call it answers.
type ToolResult struct {
	// CallID and Name identify the call the result answers.
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
	// Content is what the model sees: text and image blocks.
	Content []Block `json:"content"`
	// IsError marks a failed call; Code says why.
	IsError bool `json:"is_error,omitempty"`
	Code    Code `json:"code,omitempty"`
	// Render is data for host UIs; it is never sent to the model.
	Render *Render `json:"render,omitempty"`
	// Files records which files the call read or changed, so history
	// pruning can prove an earlier read superseded. It is never sent to
	// the model.
	Files []FileAccess `json:"files,omitempty"`
}

// TextResult returns a successful result with one text block.
func TextResult(s string) *ToolResult { return &ToolResult{Content: []Block{TextBlock(s)}} }

// ErrorResult returns a failed result with code and one text block.
func ErrorResult(code Code, format string, args ...any) *ToolResult {
	return &ToolResult{IsError: true, Code: code, Content: []Block{TextBlock(fmt.Sprintf(format, args...))}}
}

// Text returns the text blocks of the result joined by newlines.
func (r *ToolResult) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for i, c := range r.Content {
		if c.Type != BlockText {
			continue
		}
		if i > 0 && b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// FileOp says what a call did to a file.
type FileOp string

// File operations.
const (
	// FileRead means the call showed (part of) the file to the model.
	FileRead FileOp = "read"
	// FileWrite means the call changed the file.
	FileWrite FileOp = "write"
)

// FileAccess records a file a call read or changed.
type FileAccess struct {
	Op FileOp `json:"op"`
	// Path is the file's path in the file system's namespace, absolute
	// and clean, so two calls naming one file compare equal.
	Path string `json:"path"`
	// Version is the file's version token after the access, if known.
	Version string `json:"version,omitempty"`
	// StartLine and EndLine give the 1-based, inclusive line window a
	// read showed. Both zero mean no line window is known.
	StartLine int `json:"start_line,omitempty"`
	EndLine   int `json:"end_line,omitempty"`
	// Complete reports that a read showed the whole file.
	Complete bool `json:"complete,omitempty"`
}
