package fs

import (
	"github.com/go-harness/harness"
)

// PathError is the detail of a failed file system operation: every
// FileSystem method fails with a *harness.Error (its Code says why:
// harness.CodeNotFound, harness.CodeStale, ...) whose cause is a
// *PathError. Read it with errors.As to explain the failure.
type PathError struct {
	// Op is the operation: "stat", "read", "write", "edit", "readdir".
	Op string
	// Path is the path the caller gave, or the component that failed.
	Path string
	// Detail is a short explanation ("line 12 is not valid UTF-8").
	Detail string
	// Err is the underlying error, if any.
	Err error

	// Count is the number of matches of an ambiguous edit.
	Count int
	// Lines lists 1-based line numbers that matter to the failure: the
	// first matches of an ambiguous edit, or near misses of an edit that
	// found nothing.
	Lines []int
	// Total is the line count of the file for harness.CodePastEnd, and
	// the size in bytes for harness.CodeTooLarge.
	Total int64
	// Limit is the limit exceeded for harness.CodeTooLarge.
	Limit int64
}

// Error says which operation on which path failed, and why.
func (e *PathError) Error() string {
	s := ""
	if e.Op != "" {
		s += e.Op + " "
	}
	if e.Path != "" {
		s += e.Path + ": "
	}
	s += e.Detail
	if e.Err != nil {
		if e.Detail != "" {
			s += ": "
		}
		s += e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *PathError) Unwrap() error { return e.Err }

// NewError returns the error a FileSystem operation reports: a
// *harness.Error with code whose cause is d and whose message reads
// "fs: <op> <path>: <code>: <detail>: <underlying error>". An
// implementation builds every error it returns with it, so that all of
// them read alike.
func NewError(code harness.Code, d *PathError) *harness.Error {
	s := "fs: "
	if d.Op != "" {
		s += d.Op + " "
	}
	if d.Path != "" {
		s += d.Path + ": "
	}
	s += string(code)
	if d.Detail != "" {
		s += ": " + d.Detail
	}
	if d.Err != nil {
		s += ": " + d.Err.Error()
	}
	return &harness.Error{Code: code, Message: s, Err: d}
}

// codeOf returns the code of an error met while reading or writing:
// harness.CodeOf, with harness.CodeIO for anything without a code.
func codeOf(err error) harness.Code {
	if c := harness.CodeOf(err); c != harness.CodeUnknown {
		return c
	}
	return harness.CodeIO
}
