package files

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// Option configures the file tools.
type Option func(*config)

type config struct {
	lines     int   // default and maximum lines per read
	lineRunes int   // characters after which a line is cut
	maxBytes  int   // selected text per read
	diffText  int   // texts of a diff render kept up to this size
	diffLines int   // hunk lines of a diff render kept up to this count
	err       error // invalid option values, reported by Validate
}

func newConfig(opts []Option) config {
	c := config{
		lines:     fs.DefaultLimit,
		lineRunes: fs.DefaultMaxLineRunes,
		maxBytes:  fs.DefaultMaxBytes,
		diffText:  64 << 10,
		diffLines: 4000,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithReadLimits sets how much one read returns: at most lines lines
// (also the default), lines cut after lineRunes characters, and at most
// maxBytes bytes of text. Zero keeps a default (2000 lines, 2000
// characters, 50 KiB); a negative value is an error, which the tools'
// Validate method reports (so tools.NewRegistry refuses them). The read
// tool's description states the limits in force.
func WithReadLimits(lines, lineRunes, maxBytes int) Option {
	return func(c *config) {
		if lines < 0 || lineRunes < 0 || maxBytes < 0 {
			c.err = errors.Join(c.err, toolexec.OptionError("files: WithReadLimits(%d, %d, %d): limits must not be negative (zero keeps a default)", lines, lineRunes, maxBytes))
			return
		}
		if lines > 0 {
			c.lines = lines
		}
		if lineRunes > 0 {
			c.lineRunes = lineRunes
		}
		if maxBytes > 0 {
			c.maxBytes = maxBytes
		}
	}
}

// WithDiffLimits bounds the diff render of write and edit results: the
// old and new texts are kept when together they have at most textBytes
// bytes, and at most hunkLines lines of hunks are kept. Past either
// bound the render is marked truncated. Zero keeps a default (64 KiB,
// 4000 lines); a negative value is an error, as for WithReadLimits.
func WithDiffLimits(textBytes, hunkLines int) Option {
	return func(c *config) {
		if textBytes < 0 || hunkLines < 0 {
			c.err = errors.Join(c.err, toolexec.OptionError("files: WithDiffLimits(%d, %d): limits must not be negative (zero keeps a default)", textBytes, hunkLines))
			return
		}
		if textBytes > 0 {
			c.diffText = textBytes
		}
		if hunkLines > 0 {
			c.diffLines = hunkLines
		}
	}
}

// Tools returns read, write and edit, in that order.
func Tools(opts ...Option) []tools.Tool {
	return []tools.Tool{Read(opts...), Write(opts...), Edit(opts...)}
}

// prepare checks what every file tool needs and resolves the path.
func prepare(call *tools.Call, tool, filePath string, writes bool) (string, fs.FileSystem, error) {
	env := call.Env
	switch {
	case strings.TrimSpace(filePath) == "":
		return "", nil, &harness.Error{Code: harness.CodeInvalidArguments,
			Message: fmt.Sprintf("file_path is empty. Give the path of the file to %s, absolute or relative to the working directory.", tool)}
	case writes && strings.HasPrefix(filePath, tools.OutputScheme):
		return "", nil, &harness.Error{Code: harness.Code(harness.CodePermission),
			Message: fmt.Sprintf("%s is a saved tool output, which is read-only. Write to a path in the workspace instead.", filePath)}
	case env == nil || env.FS == nil:
		return "", nil, &harness.Error{Code: harness.CodeToolFailed,
			Message: fmt.Sprintf("The %s tool has no file system in this session, so it cannot be used.", tool)}
	}
	return env.Resolve(filePath), env.FS, nil
}
