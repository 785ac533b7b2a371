package harness

import (
	"context"
	"errors"
	iofs "io/fs"
)

// Code is a stable, machine-readable reason for a failure: snake_case,
// and it never changes meaning once shipped. Every code of the module is
// one of the constants of this package.
//
// A Code is itself an error, an immutable sentinel: errors.Is(err, c)
// reports whether err (or an error in its chain) is an [*Error] with
// code c.
type Code string

// Error returns the code's text.
func (c Code) Error() string { return string(c) }

// Error is a failure with a stable code. Message is written for whoever
// reads it: for a tool failure the model, so it says what went wrong and
// what to do next. Err is the cause, if any; package-specific detail
// travels there (the file system's operation and path, a model
// provider's HTTP status), found with errors.As.
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error returns the message; without one, the cause's text; without a
// cause, the code.
func (e *Error) Error() string {
	switch {
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Error()
	}
	return string(e.Code)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the error's code. An error with
// CodeNotFound, CodeExists or CodePermission also matches io/fs's
// ErrNotExist, ErrExist or ErrPermission, so code that knows only the
// standard library can test it too.
func (e *Error) Is(target error) bool {
	if c, ok := target.(Code); ok {
		return c == e.Code
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

// CodeOf returns the code of err: "" for nil; otherwise the code of the
// first error in its chain that has one (an [*Error], a [Code], or any
// error with an ErrorCode() string method, as other modules' errors may
// have); CodeAborted for a cancelled context and CodeTimeout for an
// expired deadline; CodeNotFound, CodeExists or CodePermission for
// io/fs's ErrNotExist, ErrExist or ErrPermission (the errors [Error.Is]
// matches); CodeUnknown for anything else. It is the one mapping every
// package uses.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	if c, ok := findCode(err); ok {
		return c
	}
	switch {
	case errors.Is(err, context.Canceled):
		return CodeAborted
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	case errors.Is(err, iofs.ErrNotExist):
		return CodeNotFound
	case errors.Is(err, iofs.ErrExist):
		return CodeExists
	case errors.Is(err, iofs.ErrPermission):
		return CodePermission
	}
	return CodeUnknown
}

// findCode walks err's chain depth first, as errors.As does, and returns
// the first non-empty code it finds.
func findCode(err error) (Code, bool) {
	for err != nil {
		switch e := err.(type) {
		case *Error:
			if e != nil && e.Code != "" {
				return e.Code, true
			}
		case Code:
			if e != "" {
				return e, true
			}
		case interface{ ErrorCode() string }:
			if c := e.ErrorCode(); c != "" {
				return Code(c), true
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if c, ok := findCode(inner); ok {
					return c, true
				}
			}
			return "", false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return "", false
		}
	}
	return "", false
}
