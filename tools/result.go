package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ContentType says which field of a [Content] is set.
type ContentType string

// Content types.
const (
	ContentText  ContentType = "text"
	ContentImage ContentType = "image"
)

// Content is one piece of what the model sees: text or an image reference.
type Content struct {
	Type  ContentType `json:"type"`
	Text  string      `json:"text,omitempty"`
	Image *Image      `json:"image,omitempty"`
}

// Text returns text content.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// ImageContent returns image content referring to img.
func ImageContent(img Image) Content { return Content{Type: ContentImage, Image: &img} }

// Image refers to an image held in an [AttachmentStore]. The session log
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

// ErrorCode is a stable, machine-readable reason for a failed call.
type ErrorCode string

// Error codes the dispatcher itself produces. Tools and packages add their
// own (the fs package's codes, for instance); a code never changes meaning
// once shipped.
const (
	CodeUnknownTool      ErrorCode = "unknown_tool"
	CodeInvalidArguments ErrorCode = "invalid_arguments"
	CodeToolPanic        ErrorCode = "tool_panic"
	CodeToolFailed       ErrorCode = "tool_failed"
	CodeTimeout          ErrorCode = "timeout"
	CodeAborted          ErrorCode = "aborted"
	CodeNotRun           ErrorCode = "not_run"
	CodeOutcomeUnknown   ErrorCode = "outcome_unknown"
)

// Result is the outcome of one call.
type Result struct {
	// Content is what the model sees.
	Content []Content `json:"content"`
	// IsError marks a failed call; Code says why.
	IsError bool      `json:"is_error,omitempty"`
	Code    ErrorCode `json:"code,omitempty"`
	// Render is data for host UIs; it never reaches the model.
	Render *Render `json:"render,omitempty"`
	// Files records which files the call read or changed, so history
	// projection can prove an earlier read superseded.
	Files []FileAccess `json:"files,omitempty"`
}

// TextResult returns a successful result with one text block.
func TextResult(s string) *Result { return &Result{Content: []Content{Text(s)}} }

// ErrorResult returns a failed result with one text block.
func ErrorResult(code ErrorCode, format string, args ...any) *Result {
	return &Result{IsError: true, Code: code, Content: []Content{Text(fmt.Sprintf(format, args...))}}
}

// Text returns the text blocks of the result joined by newlines.
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for i, c := range r.Content {
		if c.Type != ContentText {
			continue
		}
		if i > 0 && b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// TextLen returns the byte count of the result's text blocks.
func (r *Result) TextLen() int {
	n := 0
	if r != nil {
		for _, c := range r.Content {
			n += len(c.Text)
		}
	}
	return n
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

// Error is an error with a stable code and a message written for the
// model. Tools may return it from Execute; the dispatcher turns it into an
// error Result with its code and message.
type Error struct {
	Code    ErrorCode
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the error's code.
func (e *Error) ErrorCode() string { return string(e.Code) }

// CodeOf returns the stable code of err: the code of the first error in
// its chain that has an ErrorCode() string method, CodeAborted for context
// cancellation, CodeTimeout for an expired deadline, and CodeToolFailed
// otherwise.
func CodeOf(err error) ErrorCode {
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		if code := c.ErrorCode(); code != "" {
			return ErrorCode(code)
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return CodeAborted
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	}
	return CodeToolFailed
}
