package checkpoint

import (
	"context"
	"fmt"

	"github.com/go-harness/harness"
)

// Store keeps the content of checkpoints, content-addressed: an
// attachment store (tools.AttachmentStore, session/attachments, or its
// S3 implementation), so checkpoints travel with sessions kept in
// PostgreSQL and on S3. Put returns "sha256:" and the hex SHA-256 of the
// bytes; Get returns the bytes of a digest, verified, or an error
// matching harness.CodeNotFound.
type Store interface {
	Put(ctx context.Context, data []byte) (string, error)
	Get(ctx context.Context, digest string) ([]byte, error)
}

// A Stager is a Store that can leave the syncing of what it stores for
// later: Stage stores data as Put does, readable at once, but durable
// (surviving a power loss) only once Sync returns; Sync makes everything
// staged so far durable. The file store of session/attachments is one:
// its Sync syncs each staged file and the directory once. With a
// Stager, [Workspace.Take] stages a checkpoint's objects and syncs them
// together, and [Workspace.Stage] leaves them for a later Sync.
type Stager interface {
	Store
	Stage(ctx context.Context, data []byte) (string, error)
	Sync(ctx context.Context) error
}

// Config configures a [Workspace]. The zero value of every field but
// Store is its default.
type Config struct {
	// Store keeps file contents and manifests. It is required.
	Store Store
	// MaxFileBytes is the largest file whose content a checkpoint keeps;
	// a larger file is recorded by digest and size only, and a rewind
	// that would need its content reports it instead of restoring it.
	// The default is 8 MiB. It must not exceed what the store accepts
	// (the file attachment store reads back at most 64 MiB).
	MaxFileBytes int64
	// MaxBinaryBytes is the largest binary file (a NUL byte in its first
	// 8 KiB) whose content a checkpoint keeps; the default is 1 MiB.
	MaxBinaryBytes int64
	// MaxCheckpointBytes bounds the new content one checkpoint stores;
	// past it, the remaining changed files are recorded by digest and
	// size only, and the next checkpoint tries again. The default is
	// 256 MiB.
	MaxCheckpointBytes int64
	// MaxEntries bounds the files, directories and links of a workspace;
	// a larger tree is not checkpointed (an error matching
	// harness.CodeTooLarge). The default is 200,000.
	MaxEntries int
	// Ignore holds extra patterns in .gitignore syntax, relative to the
	// workspace directory, that take precedence over its .gitignore
	// files. Matching paths are not recorded and never touched by a
	// rewind.
	Ignore []string
	// Exclude, when set, leaves out the paths (slash-separated, relative
	// to the workspace directory) it returns true for, as if ignored:
	// they are never read, stored or touched by a rewind. The agent sets
	// it to keep what its permission rules deny reading out of the store.
	Exclude func(path string, isDir bool) bool
}

// Defaults.
const (
	DefaultMaxFileBytes       = 8 << 20
	DefaultMaxBinaryBytes     = 1 << 20
	DefaultMaxCheckpointBytes = 256 << 20
	DefaultMaxEntries         = 200_000
)

// Validate reports the error Open would report for c: a missing store
// or a negative limit (harness.CodeInvalidOption).
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults returns c with its zero fields set, or an error naming a
// field out of range.
func (c Config) withDefaults() (Config, error) {
	if c.Store == nil {
		return c, optionErr("Config.Store is required: pass an attachment store")
	}
	if c.MaxFileBytes < 0 || c.MaxBinaryBytes < 0 || c.MaxCheckpointBytes < 0 || c.MaxEntries < 0 {
		return c, optionErr("the limits of Config must not be negative")
	}
	if c.MaxFileBytes == 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.MaxBinaryBytes == 0 {
		c.MaxBinaryBytes = DefaultMaxBinaryBytes
	}
	if c.MaxCheckpointBytes == 0 {
		c.MaxCheckpointBytes = DefaultMaxCheckpointBytes
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	c.MaxBinaryBytes = min(c.MaxBinaryBytes, c.MaxFileBytes)
	return c, nil
}

func optionErr(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "checkpoint: " + fmt.Sprintf(format, args...)}
}
