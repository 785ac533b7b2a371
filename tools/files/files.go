package files

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// Config configures the file tools. The zero value is the default. A
// negative value is an error, which the tools' Validate method reports
// (so tools.NewRegistry refuses them).
type Config struct {
	// Lines is how many lines one read returns at most, and by default
	// (2000). The read tool's description states it.
	Lines int
	// LineRunes is how many characters of a line a read shows before it
	// cuts the line (2000).
	LineRunes int
	// MaxBytes bounds the text one read returns, in bytes (50 KiB).
	MaxBytes int
	// DiffText bounds the diff render of write and edit results: the old
	// and new texts are kept when together they have at most DiffText
	// bytes (64 KiB). Past it the render is marked truncated.
	DiffText int
	// DiffLines is how many lines of hunks a diff render keeps (4000).
	// Past it the render is marked truncated.
	DiffLines int
}

// config is a Config with its defaults filled in.
type config struct {
	lines     int   // default and maximum lines per read
	lineRunes int   // characters after which a line is cut
	maxBytes  int   // selected text per read
	diffText  int   // texts of a diff render kept up to this size
	diffLines int   // hunk lines of a diff render kept up to this count
	err       error // invalid values, reported by Validate
}

// resolve fills in the defaults of cfg and checks it.
func (cfg Config) resolve() config {
	if cfg.Lines < 0 || cfg.LineRunes < 0 || cfg.MaxBytes < 0 || cfg.DiffText < 0 || cfg.DiffLines < 0 {
		c := Config{}.resolve()
		c.err = toolexec.OptionError("files: Config%+v: limits must not be negative (zero keeps a default)", cfg)
		return c
	}
	return config{
		lines:     cmp.Or(cfg.Lines, fs.DefaultLimit),
		lineRunes: cmp.Or(cfg.LineRunes, fs.DefaultMaxLineRunes),
		maxBytes:  cmp.Or(cfg.MaxBytes, fs.DefaultMaxBytes),
		diffText:  cmp.Or(cfg.DiffText, 64<<10),
		diffLines: cmp.Or(cfg.DiffLines, 4000),
	}
}

// Tools returns read, write and edit, in that order.
func Tools(cfg Config) []tools.Tool {
	return []tools.Tool{Read(cfg), Write(cfg), Edit(cfg)}
}

// prepare checks what every file tool needs and resolves the path.
func prepare(call *tools.Call, tool, filePath string, writes bool) (string, fs.FileSystem, error) {
	env := call.Env
	switch {
	case strings.TrimSpace(filePath) == "":
		return "", nil, &harness.Error{Code: harness.CodeInvalidArguments,
			Message: fmt.Sprintf("file_path is empty. Give the path of the file to %s, absolute or relative to the working directory.", tool)}
	case writes && strings.HasPrefix(filePath, tools.OutputScheme):
		return "", nil, &harness.Error{Code: harness.CodePermission,
			Message: fmt.Sprintf("%s is a saved tool output, which is read-only. Write to a path in the workspace instead.", filePath)}
	case env == nil || env.FS == nil:
		return "", nil, &harness.Error{Code: harness.CodeToolFailed,
			Message: fmt.Sprintf("The %s tool has no file system in this session, so it cannot be used.", tool)}
	}
	return env.Resolve(filePath), env.FS, nil
}
