package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/configfile"
	"github.com/go-harness/harness/internal/durable"
	"github.com/go-harness/harness/session/internal/jsonstr"
	"github.com/go-harness/harness/session/internal/storekit"
)

// jsonlStore is the Store NewJSONL returns.
type jsonlStore struct {
	dir string
	now func() time.Time
	cfg storeConfig
	// dirSync syncs dir for the logs created in it: logs whose first
	// Syncs come together share one sync of the directory.
	dirSync *durable.Dir
}

// NewJSONL returns the default Store: one append-only JSON Lines file
// per session in dir, which is created 0700 on first use. A log's file is
// <dir>/<id>.jsonl, created 0600; its first line is the header and every
// further line is one event.
//
// A log is open for appending in at most one place at a time (an advisory
// file lock on Unix); Load works at any time, also while another process
// appends. Package session/search scans the files of this store itself
// rather than loading each session.
func NewJSONL(dir string, cfg StoreConfig) Store {
	return newJSONL(dir, cfg)
}

func newJSONL(dir string, cfg StoreConfig) *jsonlStore {
	return &jsonlStore{dir: dir, now: time.Now, cfg: newStoreConfig(cfg), dirSync: durable.NewDir(dir)}
}

// MaxLineSize returns the longest log line the store writes or reads
// (sessiontest checks the bound a store reports this way).
func (s *jsonlStore) MaxLineSize() int { return s.cfg.maxLine }

// LogDir tells package search where the logs are and how long their lines
// may be; the type only packages of session can name keeps any other store
// from looking like this one.
func (s *jsonlStore) LogDir() storekit.LogDir {
	return storekit.LogDir{Path: s.dir, MaxLine: s.cfg.maxLine, Err: s.cfg.err}
}

// path returns the file that holds session id.
func (s *jsonlStore) path(id string) string { return filepath.Join(s.dir, id+".jsonl") }

// Create implements Store. The header is written and synced to a
// temporary file that is then linked under the session's name, so a
// crash never leaves a log without its header behind. The directory is
// synced by the log's first Sync (or Close), not here: until then the log
// may vanish in a power loss, as its unsynced appends may, but it is
// never there without its header.
func (s *jsonlStore) Create(ctx context.Context, h Header) (Log, error) {
	if err := s.cfg.err; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := prepareHeader(h, s.now())
	if err != nil {
		return nil, err
	}
	line, err := marshalHeader(h)
	if err != nil {
		return nil, fmt.Errorf("session: encoding header: %w", err)
	}
	if err := headerTooLarge(h, line, s.cfg.maxLine); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("session: creating store directory: %w", err)
	}
	line = append(line, '\n')
	if _, err := os.Lstat(s.path(h.ID)); errors.Is(err, iofs.ErrNotExist) {
		// What a deleted session of this id left must not become ours.
		if err := s.removeMeta(h.ID); err != nil {
			return nil, fmt.Errorf("session %s: removing an old title file: %w", h.ID, err)
		}
	}
	var f *os.File
	if runtime.GOOS == "windows" {
		f, err = s.createInPlace(h.ID, line)
	} else {
		f, err = s.createLinked(h.ID, line)
	}
	if err != nil {
		return nil, err
	}
	return &jsonlLog{logState: logState{header: h, next: 1, maxLine: s.cfg.maxLine}, f: f, now: s.now, dir: s.dirSync, path: s.path(h.ID), release: s.cfg.release}, nil
}

// tempPrefix starts the names of files Create has not finished; List and
// Search skip them, Prune removes old ones.
const tempPrefix = ".create-"

// createLinked writes the header to a temporary file, syncs it, and links
// it under the log's name, which fails if the name is taken.
func (s *jsonlStore) createLinked(id string, header []byte) (*os.File, error) {
	if _, err := os.Lstat(s.path(id)); err == nil {
		return nil, fmt.Errorf("%w: %s", storeErr(harness.CodeExists), id)
	}
	f, err := os.CreateTemp(s.dir, tempPrefix+id+"-*")
	if err != nil {
		return nil, fmt.Errorf("session: creating log: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	fail := func(err error) (*os.File, error) {
		f.Close()
		return nil, err
	}
	if err := lockFile(f); err != nil {
		return fail(fmt.Errorf("session %s: %w", id, err))
	}
	if _, err := f.Write(header); err != nil {
		return fail(fmt.Errorf("session: writing header: %w", err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("session: writing header: %w", err))
	}
	if err := os.Link(tmp, s.path(id)); err != nil {
		if errors.Is(err, iofs.ErrExist) {
			return fail(fmt.Errorf("%w: %s", storeErr(harness.CodeExists), id))
		}
		f.Close()
		// No hard links here (some file systems): write in place.
		return s.createInPlace(id, header)
	}
	return f, nil
}

// removeStale removes the temporary files of Creates that a crash
// interrupted, and title files whose log is gone, when they were last
// changed before the given time.
func (s *jsonlStore) removeStale(before time.Time) error {
	if err := s.cfg.err; err != nil {
		return err
	}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session: listing %s: %w", s.dir, err)
	}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), tempPrefix) && !s.orphanMeta(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(before) {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// createInPlace creates the log under its name and writes the header.
func (s *jsonlStore) createInPlace(id string, header []byte) (*os.File, error) {
	f, err := os.OpenFile(s.path(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if errors.Is(err, iofs.ErrExist) {
		return nil, fmt.Errorf("%w: %s", storeErr(harness.CodeExists), id)
	}
	if err != nil {
		return nil, fmt.Errorf("session: creating log: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	_, err = f.Write(header)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(s.path(id))
		return nil, fmt.Errorf("session: writing header: %w", err)
	}
	return f, nil
}

// Open implements Store. A torn last line (a crash mid-write) is kept in
// the file as it is, ended with a newline so new events start on a line of
// their own; loading skips it with a warning.
func (s *jsonlStore) Open(ctx context.Context, id string) (Log, *Transcript, error) {
	if err := s.cfg.err; err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if !validID(id) {
		return nil, nil, fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	f, err := configfile.OpenFile(s.path(id), os.O_RDWR|os.O_APPEND)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session %s: opening log: %w", id, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("session %s: %w", id, err)
	}
	ld, err := readTranscript(ctx, f, id, s.cfg.maxLine)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	t := ld.t
	if !ld.endsInNewline {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("session %s: ending torn line: %w", id, err)
		}
	}
	return &jsonlLog{logState: logState{header: t.Header, next: ld.next, maxLine: s.cfg.maxLine}, f: f, now: s.now, dirty: true, path: s.path(id), release: s.cfg.release}, t, nil // what a process that stopped appended may be unsynced
}

// Load implements Store.
func (s *jsonlStore) Load(ctx context.Context, id string) (*Transcript, error) {
	if err := s.cfg.err; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	f, err := configfile.Open(s.path(id))
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: opening log: %w", id, err)
	}
	defer f.Close()
	ld, err := readTranscript(ctx, f, id, s.cfg.maxLine)
	if err != nil {
		return nil, err
	}
	return ld.t, nil
}

// List implements Store. It reads each log's header and, for the title,
// at most a bounded start of the log (the first user message is near the
// top); it never reads whole logs. With a Limit, logs are visited newest
// first and the visit stops once Limit sessions matched.
func (s *jsonlStore) List(ctx context.Context, opts ListOptions) ([]Info, error) {
	if err := s.cfg.err; err != nil {
		return nil, err
	}
	files, err := s.logFiles(nil)
	if err != nil {
		return nil, err
	}
	var out []Info
	for i, lf := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Stop when the limit is reached, unless the next log has the same
		// update time as the last one kept (sortInfos breaks such ties by
		// header fields).
		if opts.Limit > 0 && len(out) >= opts.Limit && !lf.Mod.Equal(files[i-1].Mod) {
			break
		}
		info, err := s.describe(lf, opts.Workspace)
		if err != nil {
			continue // not a readable session log; Load reports why
		}
		if info != nil && (len(opts.Tags) == 0 || s.readMeta(lf.ID).HasTags(opts.Tags)) {
			out = append(out, *info)
		}
	}
	sortInfos(out)
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

// Stat describes session id as List does, reading only its header and
// the start of its first user message.
func (s *jsonlStore) Stat(ctx context.Context, id string) (Info, error) {
	if err := s.cfg.err; err != nil {
		return Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	if !validID(id) {
		return Info{}, fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	info, err := s.describe(storekit.LogFile{ID: id}, "")
	if errors.Is(err, iofs.ErrNotExist) {
		return Info{}, fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	if err != nil {
		return Info{}, err
	}
	return *info, nil
}

// logFiles returns the store's logs, newest first by modification time,
// leaving out the ids in skip.
func (s *jsonlStore) logFiles(skip map[string]bool) ([]storekit.LogFile, error) {
	files, err := storekit.LogFiles(s.dir, skip, validID)
	if err != nil {
		return nil, fmt.Errorf("session: listing %s: %w", s.dir, err)
	}
	return files, nil
}

// Bounds on what describe reads of one log.
const (
	maxHeaderLine = 64 << 10  // a longer first line is not a header
	titleScan     = 256 << 10 // bytes read looking for the first user message
	titlePrefix   = 16 << 10  // bytes of the user message line decoded
)

// describe reads the header and title of one log; nil when the workspace
// filter excludes it.
func (s *jsonlStore) describe(lf storekit.LogFile, workspace string) (*Info, error) {
	f, err := configfile.Open(s.path(lf.ID))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, titlePrefix)
	h, err := readHeader(br, lf.ID)
	if err != nil {
		return nil, err
	}
	if workspace != "" && !Below(h.Cwd, workspace) {
		return nil, nil
	}
	info := &Info{Header: h, Updated: st.ModTime().UTC(), Size: st.Size()}
	info.Title = scanTitle(br, titleScan)
	s.readMeta(lf.ID).Describe(info)
	return info, nil
}

// readHeader reads and parses the first line of a log.
func readHeader(br *bufio.Reader, id string) (Header, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxHeaderLine {
			return Header{}, fmt.Errorf("session %s: the first line is not a session header", id)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(line) == 0 {
			return Header{}, fmt.Errorf("session %s: the log is empty (no header line)", id)
		}
		return parseHeader(line, id)
	}
}

// scanTitle looks for the first user message in at most budget bytes of
// lines and returns its title. Only the start of that message is read.
func scanTitle(br *bufio.Reader, budget int) string {
	for read := 0; read < budget; {
		frag, err := br.ReadSlice('\n')
		read += len(frag)
		if isType(frag, TypeUser) {
			if err == nil || errors.Is(err, io.EOF) {
				var e Event
				if json.Unmarshal(frag, &e) == nil {
					if u, ok := e.Data.(*UserMessage); ok {
						return titleOf(u)
					}
				}
			}
			if t, ok := titleFromPrefix(frag); ok {
				return t
			}
		}
		// Skip the rest of a long line.
		for errors.Is(err, bufio.ErrBufferFull) && read < budget {
			frag, err = br.ReadSlice('\n')
			read += len(frag)
		}
		if err != nil {
			return ""
		}
	}
	return ""
}

// isType reports whether the line starts like an event of type typ, as
// Event.MarshalJSON writes it: the type comes before the data.
func isType(line []byte, typ string) bool {
	head := line[:min(len(line), 160)]
	i := bytes.Index(head, []byte(`"type":"`))
	if i < 0 {
		return false
	}
	rest := head[i+len(`"type":"`):]
	return len(rest) > len(typ) && string(rest[:len(typ)]) == typ && rest[len(typ)] == '"'
}

// titleFromPrefix extracts the title from the start of a user message
// line too long to decode whole: the first "text" string of its data.
func titleFromPrefix(line []byte) (string, bool) {
	i := bytes.Index(line, []byte(`"data":`))
	if i < 0 {
		return "", false
	}
	j := bytes.Index(line[i:], []byte(`"text":"`))
	if j < 0 {
		return "", false
	}
	text, _ := jsonstr.Prefix(line[i+j+len(`"text":"`):])
	return storekit.Title(text), true
}

// Delete implements Store. A log open for appending (here or in another
// process) is not deleted: Delete fails with harness.CodeLocked.
func (s *jsonlStore) Delete(ctx context.Context, id string) error {
	if err := s.cfg.err; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !validID(id) {
		return fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	f, err := configfile.Open(s.path(id))
	if errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	if err != nil {
		return fmt.Errorf("session %s: deleting: %w", id, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return fmt.Errorf("session %s: %w", id, err)
	}
	if runtime.GOOS == "windows" {
		f.Close() // an open file cannot be removed there
	} else {
		defer f.Close() // hold the lock until the name is gone
	}
	err = os.Remove(s.path(id))
	if errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	if err != nil {
		return fmt.Errorf("session %s: deleting: %w", id, err)
	}
	if err := s.removeMeta(id); err != nil {
		return fmt.Errorf("session %s: deleting its title and tags: %w", id, err)
	}
	return nil
}

type jsonlLog struct {
	logState
	f   *os.File
	now func() time.Time
	// pending holds the lines of deferred events (Defer), which the next
	// write puts first; its array is reused for the lines of each write
	// until the next Sync, which lets it go so an idle log holds none.
	pending []byte
	enc     eventEncoder
	err     error // sticky write error: the file may hold a torn line
	// dirty says that something was written since the last sync; dir,
	// until the first sync, syncs the directory a new log was created in
	// (shared with the store's other logs).
	dirty bool
	dir   *durable.Dir
	// writes, fileSyncs and dirSyncs count the writes and syncs done,
	// for the tests.
	writes, fileSyncs, dirSyncs int
	// path is the log's file. With release (StoreConfig.ReleaseIdle),
	// Release closes f and keeps in left what the file was then; the
	// next write opens it again (reopen).
	path    string
	release bool
	left    iofs.FileInfo
}

// Release implements Releaser: with StoreConfig.ReleaseIdle, the log
// closes its file, letting go of its lock, until its next write. A
// closed log holds nothing: releasing it does nothing.
func (l *jsonlLog) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.release || l.closed || l.f == nil || l.err != nil {
		return nil
	}
	fi, err := l.f.Stat()
	if err != nil {
		return nil // keep it open
	}
	unlockFile(l.f)
	if err := l.f.Close(); err != nil {
		l.f = nil
		l.err = err
		return fmt.Errorf("session %s: releasing the log: %w", l.header.ID, err)
	}
	l.f, l.left = nil, fi
	return nil
}

// file returns the log's file, opening and locking it again after a
// Release. The file must be the one released, as long as it was then:
// otherwise another process has appended to it, replaced or deleted it,
// and the log refuses to write.
func (l *jsonlLog) file() (*os.File, error) {
	if l.f != nil {
		return l.f, nil
	}
	changed := func(what string) error {
		return fmt.Errorf("session %s: %w: the log %s while the session was idle; resume the session again", l.header.ID, storeErr(harness.CodeLocked), what)
	}
	f, err := configfile.OpenFile(l.path, os.O_RDWR|os.O_APPEND)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, changed("was deleted")
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: opening the log again: %w", l.header.ID, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: %w (another process opened the log while the session was idle)", l.header.ID, err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("session %s: opening the log again: %w", l.header.ID, err)
	case !os.SameFile(fi, l.left):
		f.Close()
		return nil, changed("was replaced")
	case fi.Size() != l.left.Size() || !fi.ModTime().Equal(l.left.ModTime()):
		f.Close()
		return nil, changed("was written to elsewhere")
	}
	l.f, l.left = f, nil
	return f, nil
}

func (l *jsonlLog) Append(ctx context.Context, payloads ...Payload) ([]Event, error) {
	return l.add(ctx, payloads, true)
}

// Defer implements Deferrer.
func (l *jsonlLog) Defer(ctx context.Context, payloads ...Payload) ([]Event, error) {
	return l.add(ctx, payloads, false)
}

// add encodes payloads after the pending lines and, when write is set,
// writes them all.
func (l *jsonlLog) add(ctx context.Context, payloads []Payload, write bool) ([]Event, error) {
	if err := l.lockOpen(ctx); err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, fmt.Errorf("session %s: log unusable after an earlier write failure: %w", l.header.ID, l.err)
	}
	events, pending, err := appendBatch(&l.enc, l.pending, l.header.ID, l.next, l.now().UTC(), l.maxLine, payloads)
	l.pending = pending
	if err != nil {
		return nil, err
	}
	l.next += int64(len(payloads))
	if write {
		if err := l.writePending(); err != nil {
			return nil, err
		}
	}
	return events, nil
}

// writePending writes the pending lines, if any.
func (l *jsonlLog) writePending() error {
	if len(l.pending) == 0 {
		return nil
	}
	if l.err != nil {
		return fmt.Errorf("session %s: log unusable after an earlier write failure: %w", l.header.ID, l.err)
	}
	f, err := l.file()
	if err != nil {
		return err
	}
	_, err = f.Write(l.pending)
	l.writes++
	if err != nil {
		l.err = err
		return fmt.Errorf("session %s: appending: %w", l.header.ID, err)
	}
	l.dirty = true
	if cap(l.pending) <= 1<<20 {
		l.pending = l.pending[:0]
	} else {
		l.pending = nil
	}
	return nil
}

func (l *jsonlLog) Sync() error { return l.ifOpen(l.sync) }

func (l *jsonlLog) Close() error {
	return l.closeOnce(func() error {
		err := l.sync()
		if l.f != nil {
			unlockFile(l.f)
			err = errors.Join(err, l.f.Close())
		}
		return err
	})
}

// sync makes the log durable: it writes the deferred events, syncs the
// file when something was written since the last sync (the header of a
// new log is synced by Create), then, the first time, the directory a new
// log was linked into. The file goes first: on file systems with a
// journal its sync commits the link too, and the directory's then costs
// little. The directory's sync is shared: logs of the store whose first
// syncs come at once (many sessions ending their first turns) wait for
// one sync that started after they were linked, not one each.
func (l *jsonlLog) sync() error {
	if err := l.writePending(); err != nil {
		return err
	}
	l.pending = nil // an idle log holds no buffer
	if l.dirty {
		f, err := l.file()
		if err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		l.fileSyncs++
		l.dirty = false
	}
	if l.dir != nil {
		if err := l.dir.Sync(); err != nil {
			return err
		}
		l.dirSyncs++
		l.dir = nil
	}
	return nil
}

type headerLine struct {
	Type string `json:"type"`
	Header
}

func marshalHeader(h Header) ([]byte, error) {
	return marshalNoEscape(headerLine{Type: "session", Header: h})
}

func parseHeader(line []byte, id string) (Header, error) {
	var hl headerLine
	if err := json.Unmarshal(bytes.TrimSpace(line), &hl); err != nil || hl.Type != "session" {
		return Header{}, fmt.Errorf("session %s: the first line is not a session header", id)
	}
	if hl.Format != storekit.FormatVersion {
		msg := fmt.Sprintf("session %s: unsupported log format %d", id, hl.Format)
		if hl.Format > storekit.FormatVersion {
			msg = fmt.Sprintf("session %s: written by a newer harness (log format %d, this build reads up to %d); upgrade the harness to open it", id, hl.Format, storekit.FormatVersion)
		}
		return Header{}, &harness.Error{Code: harness.CodeUnsupportedFormat, Message: msg}
	}
	return hl.Header, nil
}

// truncatedJSON reports that err says line ends in the middle of a JSON
// value: the line is the start of an event whose write was cut short.
func truncatedJSON(err error, line []byte) bool {
	var syn *json.SyntaxError
	// encoding/json reports input that ends inside an escape as the
	// invalid character ' ' it feeds at the end, not as an unexpected end.
	if !errors.As(err, &syn) || syn.Offset < int64(len(bytes.TrimRight(line, " \t\r"))) {
		return false
	}
	msg := syn.Error()
	return strings.Contains(msg, "unexpected end") || strings.HasPrefix(msg, "invalid character ' '")
}

func sortInfos(infos []Info) {
	sort.SliceStable(infos, func(i, j int) bool {
		a, b := infos[i], infos[j]
		if !a.Updated.Equal(b.Updated) {
			return a.Updated.After(b.Updated)
		}
		if !a.Header.Created.Equal(b.Header.Created) {
			return a.Header.Created.After(b.Header.Created)
		}
		return a.Header.ID > b.Header.ID
	})
}
