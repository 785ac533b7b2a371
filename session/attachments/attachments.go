package attachments

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/internal/configfile"
	"github.com/go-harness/harness/internal/durable"
)

// digestPrefix starts every attachment digest: the digest is
// digestPrefix followed by the lowercase hex SHA-256 of the bytes.
const digestPrefix = attdigest.Prefix

// Store is an attachment store: a tools.AttachmentStore and a
// model.ImageSource (Put returns the digest of the bytes it stored, Get
// returns the bytes of a digest). NewFiles keeps attachments in files,
// NewMemory in memory; the zero Store is an empty in-memory store. It is
// safe for concurrent use.
//
// A Store fails with harness errors: harness.CodeNotFound for a digest no
// attachment has, harness.CodeInvalidDigest for a digest that is not
// "sha256:" followed by 64 lowercase hex digits, and
// harness.CodeCorruptAttachment when the stored bytes no longer hash to
// their digest (they are not returned).
type Store struct {
	once sync.Once
	b    backend
}

// backend is where a Store keeps its attachments.
type backend interface {
	Put(ctx context.Context, data []byte) (string, error)
	Get(ctx context.Context, digest string) ([]byte, error)
}

// backend returns where s keeps its attachments: memory for a zero Store.
func (s *Store) backend() backend {
	s.once.Do(func() {
		if s.b == nil {
			s.b = newMemory()
		}
	})
	return s.b
}

// Put stores data, unless it is stored already, and returns its digest,
// "sha256:" and the lowercase hex SHA-256 of the bytes (a
// tools.AttachmentStore's Put).
func (s *Store) Put(ctx context.Context, data []byte) (string, error) {
	return s.backend().Put(ctx, data)
}

// Get returns the bytes stored under digest (a tools.AttachmentStore's
// and a model.ImageSource's Get).
func (s *Store) Get(ctx context.Context, digest string) ([]byte, error) {
	return s.backend().Get(ctx, digest)
}

// notFound is the error of a digest no attachment has.
func notFound(digest string) error {
	return &harness.Error{Code: harness.CodeNotFound, Message: "attachments: no attachment " + digest + " is stored"}
}

func checkDigest(d string) error {
	if !attdigest.Valid(d) {
		return &harness.Error{Code: harness.CodeInvalidDigest, Message: fmt.Sprintf("attachments: invalid attachment digest %q (want \"sha256:\" and 64 lowercase hex digits)", d)}
	}
	return nil
}

// files is the store NewFiles returns.
type files struct {
	dir string
}

// NewFiles returns an attachment store that keeps each attachment in its
// own file in dir, named by its digest: <dir>/sha256/<hex>. Files are
// written atomically (a private temporary file in the same directory,
// synced, then renamed into place, and the directory synced), so a crash
// leaves either the whole attachment or none. Storing bytes already
// present writes nothing. Get hashes what it reads and refuses bytes that
// do not match their digest. Directories are created 0700 and files 0600
// on first use.
//
// Attachments are shared by every session that uses the directory;
// deleting a session does not delete them. Beside a JSONL session store,
// the usual place is a directory named "attachments" in the store's
// directory:
//
//	store := session.NewJSONL(dir, session.StoreConfig{})
//	loop, err := agent.New(
//		agent.WithStores(agent.Stores{
//			Sessions:    store,
//			Attachments: attachments.NewFiles(filepath.Join(dir, "attachments")),
//		}),
//		...
//	)
func NewFiles(dir string) *Store { return &Store{b: &files{dir: dir}} }

// path returns the file that holds the attachment with digest, which must
// be valid.
func (d *files) path(digest string) (string, error) {
	if err := checkDigest(digest); err != nil {
		return "", err
	}
	return filepath.Join(d.dir, "sha256", strings.TrimPrefix(digest, digestPrefix)), nil
}

func (d *files) Put(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	digest := attdigest.Of(data)
	p, _ := d.path(digest)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		if have, err := os.ReadFile(p); err == nil && bytes.Equal(have, data) {
			return digest, nil // already stored, and intact
		}
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("attachments: creating attachment directory: %w", err)
	}
	if err := writeAtomic(dir, p, data); err != nil {
		return "", fmt.Errorf("attachments: storing attachment %s: %w", digest, err)
	}
	return digest, nil
}

func (d *files) Get(ctx context.Context, digest string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := d.path(digest)
	if err != nil {
		return nil, err
	}
	// Only a regular file, and no more than an attachment may hold: a
	// link to /dev/zero or a pipe planted in the directory must not hang
	// the reader or fill its memory.
	data, err := configfile.ReadLimit(p, maxFileSize)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, notFound(digest)
	}
	if err != nil {
		return nil, fmt.Errorf("attachments: reading attachment %s: %w", digest, err)
	}
	if got := attdigest.Of(data); got != digest {
		return nil, &harness.Error{Code: harness.CodeCorruptAttachment, Message: fmt.Sprintf("attachments: the stored attachment %s holds bytes hashing to %s; it is damaged, store it again", digest, got)}
	}
	return data, nil
}

// maxFileSize bounds a stored attachment read back, as the S3 store's
// default bound does (attachments are downscaled images, far smaller).
const maxFileSize = 64 << 20

// writeAtomic replaces path with data: a private temporary file in dir,
// synced, renamed over path, then dir synced.
func writeAtomic(dir, path string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return durable.SyncDir(dir)
}

// memory is the store NewMemory returns.
type memory struct {
	mu sync.RWMutex
	m  map[string][]byte
}

// NewMemory returns an empty attachment store that keeps attachments in
// memory, for tests and short-lived programs. It stores a copy of what it
// is given and returns a copy of what it holds.
func NewMemory() *Store { return &Store{b: newMemory()} }

func newMemory() *memory { return &memory{m: map[string][]byte{}} }

func (s *memory) Put(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	digest := attdigest.Of(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[digest]; !ok {
		s.m[digest] = bytes.Clone(data)
		if s.m[digest] == nil {
			s.m[digest] = []byte{}
		}
	}
	return digest, nil
}

func (s *memory) Get(ctx context.Context, digest string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkDigest(digest); err != nil {
		return nil, err
	}
	s.mu.RLock()
	data, ok := s.m[digest]
	s.mu.RUnlock()
	if !ok {
		return nil, notFound(digest)
	}
	return bytes.Clone(data), nil
}
