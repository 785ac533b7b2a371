// Package durable holds what the module's file stores do to make a
// rename survive a crash.
package durable

import (
	"errors"
	"os"
	"sync"
)

// SyncDir flushes a directory's entries to stable storage, so that a file
// just created or renamed in it is still there after a crash. A file
// system that cannot sync a directory (os.ErrInvalid) is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// A Dir syncs one directory for many callers at once (a group commit).
// A file linked into the directory is durable once a sync of the
// directory that started after the link has finished; one such sync
// serves every file linked before it started. Callers that ask while a
// sync runs wait for it, then share the next one: however many files
// were linked, the directory is synced at most twice for them, not once
// each.
type Dir struct {
	path string
	sync func(string) error // SyncDir; tests slow it down

	mu                sync.Mutex
	done              *sync.Cond
	running           bool
	started, finished uint64 // generations of syncs
	err               error  // of the sync that finished last
	syncs             int    // syncs done, for the tests
}

// NewDir returns a Dir for the directory at path.
func NewDir(path string) *Dir {
	d := &Dir{path: path, sync: SyncDir}
	d.done = sync.NewCond(&d.mu)
	return d
}

// Sync returns once a sync of the directory that started after Sync was
// called has finished, with that sync's error (or that of a later one,
// which covers it too).
func (d *Dir) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	// A sync running now may have started before the caller's link: the
	// next one to start is the first that certainly covers it.
	want := d.started + 1
	for d.finished < want {
		if d.running {
			d.done.Wait()
			continue
		}
		d.running = true
		d.started++
		gen := d.started
		d.mu.Unlock()
		err := d.sync(d.path)
		d.mu.Lock()
		d.running = false
		d.finished, d.err = gen, err
		d.syncs++
		d.done.Broadcast()
	}
	return d.err
}
