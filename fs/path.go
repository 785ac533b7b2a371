package fs

import (
	"path"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
)

// Path limits every implementation enforces, so that a path refused by one
// is refused by all.
const (
	// MaxPathLen is the longest path accepted, in bytes.
	MaxPathLen = 4096
	// MaxNameLen is the longest path element accepted, in bytes.
	MaxNameLen = 255
)

// CleanPath checks that p is a well-formed absolute namespace path and
// returns it cleaned (path.Clean). It refuses, with harness.CodeInvalidPath, an
// empty or relative path, a NUL byte, a path longer than MaxPathLen and an
// element longer than MaxNameLen. ".." elements are resolved lexically;
// whether the result stays inside a root is for the caller to check.
func CleanPath(op, p string) (string, error) {
	bad := func(detail string) error {
		return NewError(harness.CodeInvalidPath, &PathError{Op: op, Path: printable(p), Detail: detail})
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
