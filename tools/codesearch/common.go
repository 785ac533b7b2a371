package codesearch

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/tools"
)

// showLine prepares a line for display: CR dropped, invalid UTF-8
// replaced, cut after lineCut bytes.
func showLine(b []byte) string {
	s := strings.TrimSuffix(string(b), "\r")
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) > lineCut {
		cut := textcut.Prefix(s, lineCut)
		return fmt.Sprintf("%s… [%d more bytes]", cut, len(s)-len(cut))
	}
	return s
}

// display returns p as the model should see it: relative to the working
// directory when below it, absolute otherwise.
func display(env *tools.Env, p string) string {
	cwd := ""
	if env != nil {
		cwd = env.Cwd
	}
	if cwd == "" {
		return p
	}
	if p == cwd {
		return "."
	}
	if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(cwd, "/")+"/"); ok {
		return rel
	}
	return p
}

// where names a searched directory in a result: as display does, but
// the working directory by its absolute path.
func where(env *tools.Env, p string) string {
	if d := display(env, p); d != "." {
		return d
	}
	return p
}

// start resolves the path argument of a search to a directory or file
// that exists.
func start(ctx context.Context, call *tools.Call, tool, given string) (fs.FileInfo, error) {
	env := call.Env
	if env == nil || env.FS == nil {
		return fs.FileInfo{}, &harness.Error{Code: harness.CodeToolFailed,
			Message: fmt.Sprintf("The %s tool has no file system in this session, so it cannot be used.", tool)}
	}
	if strings.HasPrefix(given, tools.OutputScheme) {
		return fs.FileInfo{}, &harness.Error{Code: harness.CodeInvalidArguments,
			Message: fmt.Sprintf("%s searches the workspace; a saved tool output (%s) can be read with read, offset and limit.", tool, given)}
	}
	p := env.Cwd
	if p == "" {
		p = fsimpl.RootOf(env.FS)
	}
	if strings.TrimSpace(given) != "" {
		p = env.Resolve(given)
	}
	fi, err := env.FS.Stat(ctx, p)
	if err != nil {
		return fs.FileInfo{}, explain(ctx, env, tool, p, err)
	}
	fi.Path = path.Clean(p)
	return fi, nil
}

// explain turns a file system error about the search path into one that
// says what to do.
func explain(ctx context.Context, env *tools.Env, tool, p string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	code := harness.CodeOf(err)
	var msg string
	switch code {
	case harness.CodeNotFound:
		msg = fmt.Sprintf("The path %s does not exist. Give an existing directory or file (relative paths start at the working directory %s).", p, env.Cwd)
	case harness.CodeOutsideRoot:
		msg = fmt.Sprintf("The path %s is outside the workspace; %s searches only under %s.", p, tool, fsimpl.RootOf(env.FS))
	case harness.CodePermission:
		msg = fmt.Sprintf("Permission denied for %s. Search another directory.", p)
	case harness.CodeInvalidPath:
		msg = fmt.Sprintf("The path %q is not valid. Give an ordinary path.", p)
	case harness.CodeNotDir:
		msg = fmt.Sprintf("A part of the path %s is a file, not a directory. Check the path.", p)
	default:
		if code == harness.CodeUnknown {
			code = harness.CodeIO
		}
		msg = fmt.Sprintf("%s could not search %s: %v.", tool, p, errors.Unwrap(err))
		if errors.Unwrap(err) == nil {
			msg = fmt.Sprintf("%s could not search %s: %v.", tool, p, err)
		}
	}
	return &harness.Error{Code: code, Message: msg, Err: err}
}
