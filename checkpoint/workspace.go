package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/pathmatch"
)

// Workspace takes checkpoints of one directory and rewinds it to them.
// It keeps the tree of its last checkpoint as a stat cache, so that a
// checkpoint of an unchanged tree costs one lstat per entry and stores
// nothing. It is safe for concurrent use; its methods run one at a time.
type Workspace struct {
	dir   string
	cfg   Config
	objs  *objects
	extra *pathmatch.Rules

	mu          sync.Mutex
	prev        *Tree     // the last checkpoint's tree: the stat cache
	prevScanned time.Time // when that checkpoint's scan started
	prevDigest  string    // its manifest
}

// Open returns a Workspace for the directory dir, which must exist and
// must not be the root of the file system.
func Open(dir string, cfg Config) (*Workspace, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: the workspace directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, &harness.Error{Code: harness.CodeNotDir, Message: "checkpoint: " + abs + " is not a directory"}
	}
	if filepath.Dir(abs) == abs {
		return nil, &harness.Error{Code: harness.CodeInvalidPath, Message: "checkpoint: " + abs + " is the root of the file system, not a workspace; give the session a project directory as its working directory"}
	}
	return &Workspace{dir: abs, cfg: cfg, objs: &objects{store: cfg.Store}, extra: extraRules(cfg.Ignore)}, nil
}

// Dir returns the workspace directory, absolute and clean.
func (w *Workspace) Dir() string { return w.dir }

// Snapshot is the state of the workspace at one point.
type Snapshot struct {
	// Manifest is the digest of the stored manifest; empty for a Scan.
	Manifest string
	// Tree holds the entries.
	Tree *Tree
	// Scanned is when the scan started: a file modified within
	// racyMargin of it is hashed again by the next scan.
	Scanned time.Time
	// Changes summarizes what changed since the workspace's previous
	// checkpoint (everything, for the first).
	Changes Summary
	// Stored is how many bytes of file content the checkpoint stored.
	Stored int64
}

// Take records a checkpoint: it scans the workspace, stores the content
// of new and changed files that the size policy keeps, and stores the
// manifest. When nothing changed since the previous checkpoint it stores
// nothing and returns the previous manifest. The checkpoint is durable
// when Take returns, as are those Stage took before it: with a [Stager]
// store, every object is staged and all are synced once, together.
func (w *Workspace) Take(ctx context.Context) (*Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	snap, err := w.take(ctx)
	// What was staged is synced even when this checkpoint failed.
	if serr := w.objs.sync(ctx); err == nil && serr != nil {
		return nil, serr
	}
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// Stage records a checkpoint as Take does, but with a [Stager] store
// leaves its objects to be made durable by the next Sync or Take: they
// can be read at once and survive the program stopping, but not a power
// loss before then. An agent stages the checkpoints within a turn and
// syncs once before it syncs its log at the turn's end, which is when
// its log promises they survive. With another store, Stage is Take.
func (w *Workspace) Stage(ctx context.Context) (*Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.take(ctx)
}

// Sync makes the checkpoints Stage took durable. It does nothing when
// none waits.
func (w *Workspace) Sync(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.objs.sync(ctx)
}

func (w *Workspace) take(ctx context.Context) (*Snapshot, error) {
	w.objs.stage = true
	defer func() { w.objs.stage = false }()
	s, err := w.scan(ctx, true)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Scanned: s.started, Stored: s.newBytes}
	if !s.changed && w.prevDigest != "" {
		snap.Tree, snap.Manifest = w.prev, w.prevDigest
	} else {
		snap.Tree = newTree(s.out)
		if snap.Manifest, err = w.objs.save(ctx, snap.Tree); err != nil {
			return nil, err
		}
		snap.Changes = Diff(w.prev, snap.Tree)
	}
	w.prev, w.prevScanned, w.prevDigest = snap.Tree, snap.Scanned, snap.Manifest
	return snap, nil
}

// Scan reads the workspace as Take does but stores nothing and leaves
// the stat cache as it is: a dry run. Kept says whether a file's content
// would be kept.
func (w *Workspace) Scan(ctx context.Context) (*Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, err := w.scan(ctx, false)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Scanned: s.started}
	if !s.changed && w.prev != nil {
		snap.Tree = w.prev
	} else {
		snap.Tree = newTree(s.out)
		snap.Changes = Diff(w.prev, snap.Tree)
	}
	return snap, nil
}

// scan walks the workspace.
func (w *Workspace) scan(ctx context.Context, store bool) (*scanner, error) {
	s := &scanner{ctx: ctx, cfg: &w.cfg, abs: filepath.ToSlash(w.dir), store: store, objs: w.objs, extra: w.extra, started: time.Now()}
	if w.prev != nil {
		s.prev = w.prev.entries
		s.racyLimit = w.prevScanned.Add(-racyMargin).UnixNano()
		s.out = make([]Entry, 0, len(s.prev)+16)
	} else {
		s.changed = true
	}
	root, err := openRootDir(w.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: opening the workspace: %w", err)
	}
	defer root.close()
	if err := s.dir(root, "", s.abs, ancestorRules(w.dir)); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if he := (*harness.Error)(nil); errors.As(err, &he) {
			return nil, err
		}
		return nil, fmt.Errorf("checkpoint: scanning %s: %w", w.dir, err)
	}
	if s.cur < len(s.prev) {
		s.changed = true // entries gone at the end
	}
	if store {
		if err := s.finish(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Prime seeds the stat cache with a stored checkpoint of this workspace,
// taken when its scan started at scanned, so that the next checkpoint of
// a resumed session hashes only what changed since. It does nothing when
// the workspace has taken or been primed with a checkpoint already.
func (w *Workspace) Prime(ctx context.Context, manifest string, scanned time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.prev != nil {
		return nil
	}
	t, err := w.objs.load(ctx, manifest)
	if err != nil {
		return err
	}
	w.prev, w.prevScanned, w.prevDigest = t, scanned, manifest
	return nil
}

// Content returns the content a checkpoint kept of a file entry,
// verified against its digest: an error matching harness.CodeNotFound
// when it was not kept (or the store lost it), harness.CodeCorruptAttachment
// when the stored bytes do not match.
func (w *Workspace) Content(ctx context.Context, e *Entry) ([]byte, error) {
	return w.objs.content(ctx, e)
}

// Load reads the tree of a stored checkpoint.
func (w *Workspace) Load(ctx context.Context, manifest string) (*Tree, error) {
	return w.objs.load(ctx, manifest)
}
