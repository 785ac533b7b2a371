package fslocal

import (
	"context"
	"errors"
	iofs "io/fs"
	"syscall"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
)

// mapErr turns an OS error into the file system's error with the
// matching code. An error that is already the file system's is returned
// as it is.
func mapErr(op, p string, err error) error {
	var d *fs.PathError
	if errors.As(err, &d) {
		return err
	}
	e := &fs.PathError{Op: op, Path: p, Err: err}
	var code harness.Code
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code = harness.CodeOf(err)
	case isEscape(err):
		code = harness.CodeOutsideRoot
		e.Detail = "a symbolic link leads outside the root"
	case errors.Is(err, iofs.ErrNotExist):
		code = harness.CodeNotFound
	case errors.Is(err, syscall.ENOTDIR):
		code = harness.CodeNotDir
	case errors.Is(err, iofs.ErrPermission):
		code = harness.CodePermission
	case errors.Is(err, syscall.EISDIR):
		code = harness.CodeNotRegular
		e.Detail = "is a directory"
	case errors.Is(err, syscall.ENAMETOOLONG):
		code = harness.CodeInvalidPath
		e.Detail = "the name is too long"
	case errors.Is(err, syscall.ELOOP):
		code = harness.CodeInvalidPath
		e.Detail = "too many levels of symbolic links"
	case errors.Is(err, iofs.ErrExist):
		code = harness.CodeExists
	default:
		code = harness.CodeIO
	}
	return fs.NewError(code, e)
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
