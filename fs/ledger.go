package fs

import (
	"sync"

	"github.com/go-harness/harness"
)

// Ledger remembers, for one agent session, the version of each file the
// agent last saw: read (any window counts) or wrote. It is what makes
// read-before-edit safe:
//
//   - edit of a file the ledger does not know is refused (not observed);
//   - write over a file the ledger does not know may only create it
//     (Precondition.Absent), so an existing file is never overwritten
//     blind;
//   - write or edit of a known file requires that it still has the
//     recorded version, so a file changed since it was seen is refused
//     (stale) before any text is matched;
//   - a successful write or edit records the new version, so write, edit,
//     edit needs no read in between.
//
// Keys are clean absolute namespace paths. The zero value is an empty
// ledger, ready to use; a Ledger is safe for concurrent use and must not
// be copied after first use. It lives in memory; the agent loop rebuilds
// a resumed session's ledger from the file accesses its log records.
type Ledger struct {
	mu   sync.Mutex
	seen map[string]string
}

// Observe records that the file at path was seen at version. An empty
// version forgets the path, as when the file was found deleted.
func (l *Ledger) Observe(path, version string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if version == "" {
		delete(l.seen, path)
		return
	}
	if l.seen == nil {
		l.seen = map[string]string{}
	}
	l.seen[path] = version
}

// Version returns the version recorded for path.
func (l *Ledger) Version(path string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.seen[path]
	return v, ok
}

// WritePrecondition returns the precondition a write of path must carry:
// the recorded version when the file was seen, create-only otherwise.
func (l *Ledger) WritePrecondition(path string) Precondition {
	if v, ok := l.Version(path); ok {
		return Precondition{Version: v}
	}
	return Precondition{Absent: true}
}

// EditPrecondition returns the precondition an edit of path must carry,
// or an error with harness.CodeNotObserved when the file was never seen.
func (l *Ledger) EditPrecondition(path string) (Precondition, error) {
	if v, ok := l.Version(path); ok {
		return Precondition{Version: v}, nil
	}
	return Precondition{}, NewError(harness.CodeNotObserved, &PathError{Op: "edit", Path: path, Detail: "the file has not been read in this session"})
}
