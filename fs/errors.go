package fs

import (
	"context"
	"errors"
	iofs "io/fs"
)

// Code is a stable, machine-readable reason for a failed file operation.
// Codes never change meaning once shipped; tools report them to the model
// and to hosts (see tools.CodeOf, which reads [Error.ErrorCode]).
type Code string

// Error codes.
const (
	// CodeNotFound: the file or a parent directory does not exist.
	CodeNotFound Code = "not_found"
	// CodeNotDir: a path component that must be a directory is not one.
	CodeNotDir Code = "not_a_directory"
	// CodeNotText: the file is not UTF-8 text (a NUL byte or invalid UTF-8).
	CodeNotText Code = "not_text"
	// CodeNotRegular: the path names a directory, device, pipe or socket
	// where a regular file is needed.
	CodeNotRegular Code = "not_regular_file"
	// CodeTooLarge: the file is larger than the operation allows.
	CodeTooLarge Code = "too_large"
	// CodePermission: the operating system or the file system refused
	// access.
	CodePermission Code = "permission_denied"
	// CodeOutsideRoot: the path, or a symbolic link on it, leads outside
	// the file system's root.
	CodeOutsideRoot Code = "outside_root"
	// CodeInvalidPath: the path is malformed: relative, empty, containing
	// a NUL byte, too long, or looping through symbolic links.
	CodeInvalidPath Code = "invalid_path"
	// CodeExists: a create-only write found the file already there.
	CodeExists Code = "already_exists"
	// CodeStale: the file changed (or disappeared) since the version the
	// caller expected.
	CodeStale Code = "stale_version"
	// CodeNotObserved: the caller has not seen the file, so it may not
	// change it (see [Ledger]).
	CodeNotObserved Code = "not_observed"
	// CodeEditNotFound: the text to replace does not occur in the file.
	CodeEditNotFound Code = "edit_not_found"
	// CodeAmbiguous: the text to replace occurs more than once and the
	// edit asked for exactly one replacement.
	CodeAmbiguous Code = "ambiguous_edit"
	// CodeInvalidEdit: the edit itself is malformed (empty old text, or
	// old and new text equal).
	CodeInvalidEdit Code = "invalid_edit"
	// CodePastEnd: a text window starts after the last line.
	CodePastEnd Code = "offset_past_end"
	// CodeAborted: the context ended before the operation finished.
	CodeAborted Code = "aborted"
	// CodeIO: any other failure of the underlying storage.
	CodeIO Code = "io_error"
)

// Error is the error every FileSystem operation returns. Match it with
// errors.Is against the sentinel values below (which compare by code) or
// with errors.As to read the details.
type Error struct {
	// Op is the operation: "stat", "read", "write", "edit", "readdir".
	Op string
	// Path is the path the caller gave, or the component that failed.
	Path string
	// Code says why the operation failed.
	Code Code
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
	// Total is the line count of the file for CodePastEnd, and the size in
	// bytes for CodeTooLarge.
	Total int64
	// Limit is the limit exceeded for CodeTooLarge.
	Limit int64
}

func (e *Error) Error() string {
	s := "fs: "
	if e.Op != "" {
		s += e.Op + " "
	}
	if e.Path != "" {
		s += e.Path + ": "
	}
	s += string(e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code as a string, so that tools.CodeOf reports it.
func (e *Error) ErrorCode() string { return string(e.Code) }

// Is reports whether target is a sentinel with the same code, or the
// io/fs error of the same meaning (fs.ErrNotExist for CodeNotFound,
// fs.ErrExist for CodeExists, fs.ErrPermission for CodePermission).
func (e *Error) Is(target error) bool {
	if t, ok := target.(*Error); ok {
		return t.Op == "" && t.Path == "" && t.Err == nil && t.Code == e.Code
	}
	switch target {
	case iofs.ErrNotExist:
		return e.Code == CodeNotFound
	case iofs.ErrExist:
		return e.Code == CodeExists
	case iofs.ErrPermission:
		return e.Code == CodePermission
	}
	return false
}

// Sentinels for errors.Is. Each matches any *Error with its code.
var (
	ErrNotFound     = &Error{Code: CodeNotFound}
	ErrNotDir       = &Error{Code: CodeNotDir}
	ErrNotText      = &Error{Code: CodeNotText}
	ErrNotRegular   = &Error{Code: CodeNotRegular}
	ErrTooLarge     = &Error{Code: CodeTooLarge}
	ErrPermission   = &Error{Code: CodePermission}
	ErrOutsideRoot  = &Error{Code: CodeOutsideRoot}
	ErrInvalidPath  = &Error{Code: CodeInvalidPath}
	ErrExists       = &Error{Code: CodeExists}
	ErrStale        = &Error{Code: CodeStale}
	ErrNotObserved  = &Error{Code: CodeNotObserved}
	ErrEditNotFound = &Error{Code: CodeEditNotFound}
	ErrAmbiguous    = &Error{Code: CodeAmbiguous}
	ErrInvalidEdit  = &Error{Code: CodeInvalidEdit}
	ErrPastEnd      = &Error{Code: CodePastEnd}
	ErrAborted      = &Error{Code: CodeAborted}
	ErrIO           = &Error{Code: CodeIO}
)

// CodeOf returns the code of the first *Error in err's chain, CodeAborted
// for a context error, CodeNotFound, CodeExists or CodePermission for the
// matching io/fs errors, and CodeIO for anything else. It returns "" for a
// nil error.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return CodeAborted
	case errors.Is(err, iofs.ErrNotExist):
		return CodeNotFound
	case errors.Is(err, iofs.ErrExist):
		return CodeExists
	case errors.Is(err, iofs.ErrPermission):
		return CodePermission
	}
	return CodeIO
}

// Aborted returns the error an operation reports when ctx has ended: an
// *Error with CodeAborted wrapping ctx.Err(), or nil while ctx is live.
func Aborted(ctx context.Context, op, path string) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, Path: path, Code: CodeAborted, Err: err}
	}
	return nil
}
