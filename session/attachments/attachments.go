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

// Stage stores data as Put does and returns its digest, but leaves it
// to Sync to make the attachment durable: it can be read at once and
// survives the program stopping, but a power loss before Sync returns
// may lose it or leave it damaged (Get then fails with
// harness.CodeCorruptAttachment or CodeNotFound; storing the bytes again
// repairs it). A caller storing several attachments that must be
// durable together stages each and syncs once. A memory store stages by
// putting.
func (s *Store) Stage(ctx context.Context, data []byte) (string, error) {
	if st, ok := s.backend().(stager); ok {
		return st.Stage(ctx, data)
	}
	return s.backend().Put(ctx, data)
}

// Sync makes every attachment staged in s so far durable. For a file
// store that is one sync of each staged file and one of the directory,
// however many were staged; for a memory store it does nothing.
func (s *Store) Sync(ctx context.Context) error {
	if st, ok := s.backend().(stager); ok {
		return st.Sync(ctx)
	}
	return ctx.Err()
}

// stager is a backend that can defer its syncs.
type stager interface {
	Stage(ctx context.Context, data []byte) (string, error)
	Sync(ctx context.Context) error
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
	// syncFile and syncDir make a file's content and a directory's
	// entries durable; tests record them to model a power loss.
	syncFile func(*os.File) error
	syncDir  func(string) error

	// mu is held while objects are written and while they are synced,
	// so a Sync never returns while an object staged before it is still
	// being synced by another.
	mu sync.Mutex
	// ready says the object directory exists; parents lists the
	// directories whose entries must be synced because this store
	// created a directory in them (once, on first use).
	ready   bool
	parents []string
	// pending holds the digests staged and not yet synced; durable
	// those known to be on stable storage (written and synced by this
	// store), so storing them again costs nothing.
	pending map[string]bool
	durable map[string]bool
}

// maxKnownDurable bounds the digests a file store remembers as durable;
// past it the set starts over, and an object stored again is synced
// again.
const maxKnownDurable = 1 << 16

// NewFiles returns an attachment store that keeps each attachment in its
// own file in dir, named by its digest: <dir>/sha256/<hex>. Files are
// written atomically (a private temporary file in the same directory,
// renamed into place), so a crash leaves either the whole attachment or
// none. Put returns once the attachment is durable: its file synced, then
// the directory. Stage writes the same way but leaves the syncs to
// Sync, which makes every staged attachment durable at once (each file
// synced, then the directory once), so a caller storing several
// attachments pays one directory sync for all of them. Storing bytes
// already present writes nothing. Get hashes what it reads and refuses
// bytes that do not match their digest. Directories are created 0700
// and files 0600 on first use.
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
func NewFiles(dir string) *Store {
	return &Store{b: &files{dir: dir, syncFile: (*os.File).Sync, syncDir: durable.SyncDir}}
}

// path returns the file that holds the attachment with digest, which must
// be valid.
func (d *files) path(digest string) (string, error) {
	if err := checkDigest(digest); err != nil {
		return "", err
	}
	return filepath.Join(d.dir, "sha256", strings.TrimPrefix(digest, digestPrefix)), nil
}

func (d *files) Put(ctx context.Context, data []byte) (string, error) {
	return d.store(ctx, data, true)
}

// Stage stores data as Put does but leaves it to Sync to make it
// durable: the attachment is readable at once and survives the process
// stopping, and a power loss once Sync has returned.
func (d *files) Stage(ctx context.Context, data []byte) (string, error) {
	return d.store(ctx, data, false)
}

// store stores data, durably when durable is set, else staged for Sync.
func (d *files) store(ctx context.Context, data []byte, durable bool) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	digest := attdigest.Of(data)
	p, _ := d.path(digest)
	d.mu.Lock()
	defer d.mu.Unlock()
	intact := false
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		if have, err := os.ReadFile(p); err == nil && bytes.Equal(have, data) {
			intact = true
		}
	}
	switch {
	case intact && d.durable[digest]:
		return digest, nil
	case intact:
		// Already stored, and intact; but perhaps staged by a process
		// that stopped before syncing it, so it is synced with the rest.
		d.addPending(digest)
	default:
		delete(d.durable, digest) // damaged since: written again
		dir := filepath.Dir(p)
		if err := d.makeDir(dir); err != nil {
			return "", fmt.Errorf("attachments: creating attachment directory: %w", err)
		}
		err := d.writeFile(dir, p, data, durable)
		if errors.Is(err, iofs.ErrNotExist) {
			// The directory went away since the store made it.
			d.ready = false
			if err = d.makeDir(dir); err == nil {
				err = d.writeFile(dir, p, data, durable)
			}
		}
		if err != nil {
			return "", fmt.Errorf("attachments: storing attachment %s: %w", digest, err)
		}
		if durable {
			// Synced before the rename: only the directory is left.
			if err := d.syncDirs(); err != nil {
				return "", err
			}
			d.markDurable(digest)
			delete(d.pending, digest)
			return digest, nil
		}
		d.addPending(digest)
	}
	if durable {
		return digest, d.syncPending()
	}
	return digest, nil
}

func (d *files) addPending(digest string) {
	if d.pending == nil {
		d.pending = map[string]bool{}
	}
	d.pending[digest] = true
}

// makeDir creates the object directory dir on first use, noting the
// parents of the directories it creates, whose entries Sync syncs. d.mu
// must be held.
func (d *files) makeDir(dir string) error {
	if d.ready {
		return nil
	}
	var created []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		created = append(created, p)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, c := range created {
		d.parents = append(d.parents, filepath.Dir(c))
	}
	d.ready = true
	return nil
}

// Sync makes every attachment staged so far durable: each file synced
// (several at once), then the directory once, and the parents of the
// directories the store created.
func (d *files) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.syncPending()
}

// syncPending syncs the staged files, then the directories. d.mu must
// be held.
func (d *files) syncPending() error {
	if len(d.pending) == 0 {
		return nil
	}
	digests := make([]string, 0, len(d.pending))
	for dg := range d.pending {
		digests = append(digests, dg)
	}
	errs := make([]error, len(digests))
	var wg sync.WaitGroup
	sem := make(chan struct{}, syncParallel)
	for i, dg := range digests {
		p, _ := d.path(dg)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = d.syncPath(p)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// A file removed since it was staged is reported once: storing
		// its bytes again stages it again.
		for i, e := range errs {
			if errors.Is(e, iofs.ErrNotExist) {
				delete(d.pending, digests[i])
			}
		}
		return fmt.Errorf("attachments: syncing stored attachments: %w", err)
	}
	if err := d.syncDirs(); err != nil {
		return err
	}
	for _, dg := range digests {
		d.markDurable(dg)
	}
	clear(d.pending)
	return nil
}

// syncDirs syncs the object directory, then the parents of the
// directories the store created. d.mu must be held.
func (d *files) syncDirs() error {
	if err := d.syncDir(filepath.Join(d.dir, "sha256")); err != nil {
		return fmt.Errorf("attachments: syncing the attachment directory: %w", err)
	}
	for len(d.parents) > 0 {
		if err := d.syncDir(d.parents[0]); err != nil {
			return fmt.Errorf("attachments: syncing the directory that holds the attachments: %w", err)
		}
		d.parents = d.parents[1:]
	}
	return nil
}

// markDurable remembers digest as durable. d.mu must be held.
func (d *files) markDurable(digest string) {
	if d.durable == nil || len(d.durable) >= maxKnownDurable {
		d.durable = map[string]bool{}
	}
	d.durable[digest] = true
}

// syncParallel bounds the files Sync syncs at once: a journaling file
// system commits syncs that wait together in one go.
const syncParallel = 8

// syncPath syncs the content of the file at p.
func (d *files) syncPath(p string) error {
	// Read and write, so the sync works where it needs a writable
	// handle, and a FIFO planted in its place does not block the open.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return errors.Join(d.syncFile(f), f.Close())
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

// writeFile replaces path with data through a private temporary file in
// dir, renamed over path, syncing the file before the rename when sync
// is set.
func (d *files) writeFile(dir, path string, data []byte, sync bool) (err error) {
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
	if sync {
		if err = d.syncFile(f); err != nil {
			f.Close()
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
