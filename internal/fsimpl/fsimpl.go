// Package fsimpl holds what the module's FileSystem implementations
// (fslocal and fs/fstest) share beyond the fs contract itself: path
// checks that refuse the same paths everywhere, the error of an ended
// context, and the write rule that keeps a file's line endings and byte
// order mark; and what the module's users of a FileSystem (the loop and
// the file tools) share: its root by the fs.Rooter rule. It imports fs
// and harness only.
package fsimpl

import (
	"bytes"
	"context"
	"errors"
	iofs "io/fs"
	"path"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/textcut"
)

// TypeLister is implemented by the module's file systems that can list a
// directory without a status call per entry (fslocal without a path
// policy). ReadDirTypes returns what ReadDir returns, except that an
// entry describe does not pick (describe may be nil) may have no Size
// or ModTime and only the type bits in Mode: a caller takes those from
// the open of a file it reads, or asks describe for the files whose time
// it shows. It is a search's shortcut, not part of the fs contract.
type TypeLister interface {
	ReadDirTypes(ctx context.Context, path string, describe func(name string, typ iofs.FileMode) bool) ([]fs.FileInfo, error)
}

// BOM is the UTF-8 byte order mark.
const BOM = "\uFEFF"

// RootOf returns fsys's root: Root() when it implements fs.Rooter and
// names one, "/" otherwise.
func RootOf(fsys fs.FileSystem) string {
	if r, ok := fsys.(fs.Rooter); ok {
		if root := r.Root(); root != "" {
			return root
		}
	}
	return "/"
}

// Limits every implementation enforces, so that a path or a file refused
// by one is refused by all.
const (
	// MaxPrevious bounds the replaced content a WriteResult carries back
	// (fs.WriteResult.Previous).
	MaxPrevious = 8 << 20
	// MaxEditSize is the largest file Edit loads; larger files fail with
	// harness.CodeTooLarge.
	MaxEditSize = 64 << 20
	// MaxPathLen is the longest path accepted, in bytes.
	MaxPathLen = 4096
	// MaxNameLen is the longest path element accepted, in bytes.
	MaxNameLen = 255
)

// CleanPath checks that p is a well-formed absolute namespace path and
// returns it cleaned (path.Clean). It refuses, with
// harness.CodeInvalidPath, an empty or relative path, a NUL byte, a path
// longer than MaxPathLen and an element longer than MaxNameLen. ".."
// elements are resolved lexically; whether the result stays inside a root
// is for the caller to check.
func CleanPath(op, p string) (string, error) {
	bad := func(detail string) error {
		return fs.NewError(harness.CodeInvalidPath, &fs.PathError{Op: op, Path: printable(p), Detail: detail})
	}
	switch {
	case p == "":
		return "", bad("empty path")
	case strings.IndexByte(p, 0) >= 0:
		return "", bad("the path contains a NUL byte")
	case len(p) > MaxPathLen:
		return "", bad("the path is longer than 4096 bytes")
	case !strings.HasPrefix(p, "/"):
		return "", bad("the path is not absolute")
	}
	for el := range strings.SplitSeq(p, "/") {
		if len(el) > MaxNameLen {
			return "", bad("a path element is longer than 255 bytes")
		}
	}
	return path.Clean(p), nil
}

// Within reports whether the clean absolute path p is root or below it,
// and returns p relative to root ("." for root itself).
func Within(root, p string) (string, bool) {
	if p == root {
		return ".", true
	}
	if root == "/" {
		return p[1:], strings.HasPrefix(p, "/") && len(p) > 1
	}
	if strings.HasPrefix(p, root) && len(p) > len(root) && p[len(root)] == '/' {
		return p[len(root)+1:], true
	}
	return "", false
}

// printable shortens a path for error messages and replaces NUL bytes.
func printable(p string) string {
	p = strings.ReplaceAll(p, "\x00", `\x00`)
	if len(p) > 200 {
		p = textcut.Prefix(p, 100) + "..." + textcut.Suffix(p, 50)
	}
	return p
}

// Aborted returns the error an operation reports when ctx has ended:
// harness.CodeAborted (or harness.CodeTimeout for an expired deadline)
// wrapping ctx.Err(), or nil while ctx is live.
func Aborted(ctx context.Context, op, path string) error {
	if err := ctx.Err(); err != nil {
		return fs.NewError(harness.CodeOf(err), &fs.PathError{Op: op, Path: path, Err: err})
	}
	return nil
}

// MatchStyle returns data in the style of prev, the content it replaces:
// with prev's byte order mark if data has none, and with CR LF line
// endings if most of prev's line endings are CR LF and data has no
// carriage return at all. Otherwise data is returned as it is. This lets a
// writer that saw the file through a read window (which shows LF and hides
// the mark) write it back unchanged; it is the rule of
// fs.WriteOptions.KeepStyle.
func MatchStyle(prev, data []byte) []byte {
	bom := bytes.HasPrefix(prev, []byte(BOM)) && !bytes.HasPrefix(data, []byte(BOM))
	crlf := dominantCRLF(prev) && bytes.IndexByte(data, '\r') < 0 && bytes.IndexByte(data, '\n') >= 0
	if !bom && !crlf {
		return data
	}
	out := make([]byte, 0, len(data)+len(BOM)+bytes.Count(data, []byte{'\n'}))
	if bom {
		out = append(out, BOM...)
	}
	if crlf {
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			out = append(out, data[:i]...)
			out = append(out, '\r', '\n')
			data = data[i+1:]
		}
	}
	return append(out, data...)
}

// dominantCRLF reports whether most line endings of b are CR LF.
func dominantCRLF(b []byte) bool {
	crlf := bytes.Count(b, []byte("\r\n"))
	return crlf > bytes.Count(b, []byte{'\n'})-crlf
}

// WithPath fills in the path of a file system error made by a shared
// helper (fs.ApplyEdit, fs.ScanText), which does not know it.
func WithPath(err error, p string) error {
	var d *fs.PathError
	if errors.As(err, &d) && d.Path == "" {
		c := *d
		c.Path = p
		return fs.NewError(harness.CodeOf(err), &c)
	}
	return err
}
