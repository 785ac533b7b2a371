package fslocal

import (
	"context"
	"errors"
	iofs "io/fs"
	"syscall"

	"github.com/go-harness/harness/fs"
)

// mapErr turns an OS error into an *fs.Error with the matching code.
func mapErr(op, p string, err error) error {
	var fe *fs.Error
	if errors.As(err, &fe) {
		return err
	}
	e := &fs.Error{Op: op, Path: p, Err: err}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		e.Code = fs.CodeAborted
	case isEscape(err):
		e.Code = fs.CodeOutsideRoot
		e.Detail = "a symbolic link leads outside the root"
	case errors.Is(err, iofs.ErrNotExist):
		e.Code = fs.CodeNotFound
	case errors.Is(err, syscall.ENOTDIR):
		e.Code = fs.CodeNotDir
	case errors.Is(err, iofs.ErrPermission):
		e.Code = fs.CodePermission
	case errors.Is(err, syscall.EISDIR):
		e.Code = fs.CodeNotRegular
		e.Detail = "is a directory"
	case errors.Is(err, syscall.ENAMETOOLONG):
		e.Code = fs.CodeInvalidPath
		e.Detail = "the name is too long"
	case errors.Is(err, syscall.ELOOP):
		e.Code = fs.CodeInvalidPath
		e.Detail = "too many levels of symbolic links"
	case errors.Is(err, iofs.ErrExist):
		e.Code = fs.CodeExists
	default:
		e.Code = fs.CodeIO
	}
	return e
}

// isEscape reports the error os.Root returns for a name that leaves the
// root (through "..", or a symbolic link that is absolute or climbs out).
// The os package does not export it, so it is recognized by its text.
func isEscape(err error) bool {
	for err != nil {
		if err.Error() == "path escapes from parent" {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}

// withPath fills in the path of an *fs.Error made by a shared helper.
func withPath(err error, p string) error {
	var e *fs.Error
	if errors.As(err, &e) && e.Path == "" {
		c := *e
		c.Path = p
		return &c
	}
	return err
}
