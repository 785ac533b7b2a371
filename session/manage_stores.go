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
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/configfile"
)

// checkFork checks the arguments of a Fork.
func checkFork(id string, opts ForkOptions) error {
	if !validID(id) {
		return fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	if opts.ID != "" && !validID(opts.ID) {
		return fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), opts.ID)
	}
	if opts.At < 0 {
		return noEvent(id, opts.At)
	}
	return nil
}

// Fork implements Store.
func (m *memory) Fork(ctx context.Context, id string, opts ForkOptions) (Header, error) {
	if err := m.cfg.err; err != nil {
		return Header{}, err
	}
	if err := ctx.Err(); err != nil {
		return Header{}, err
	}
	if err := checkFork(id, opts); err != nil {
		return Header{}, err
	}
	m.mu.Lock()
	s, ok := m.sessions[id]
	var parent Header
	var lines [][]byte
	if ok {
		parent, lines = s.header, s.lines[:len(s.lines):len(s.lines)]
	}
	m.mu.Unlock()
	if !ok {
		return Header{}, fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	cut, at := len(lines), int64(0)
	for i, l := range lines {
		seq, ok := lineSeq(l)
		if !ok {
			continue
		}
		if opts.At == 0 {
			at = seq
			continue
		}
		if seq == opts.At {
			cut, at = i+1, seq
			break
		}
	}
	if opts.At != 0 && at != opts.At {
		return Header{}, noEvent(id, opts.At)
	}
	h, err := prepareHeader(forkHeader(parent, opts, at), m.now())
	if err != nil {
		return Header{}, err
	}
	line, err := marshalHeader(h)
	if err != nil {
		return Header{}, err
	}
	if err := headerTooLarge(h, line, m.cfg.maxLine); err != nil {
		return Header{}, err
	}
	fork := &memSession{header: h, updated: m.now().UTC(), size: int64(len(line) + 1)}
	for _, l := range lines[:cut] {
		fork.lines = append(fork.lines, bytes.Clone(l))
		fork.size += int64(len(l) + 1)
		if fork.title == "" {
			var e Event
			if e.UnmarshalJSON(l) == nil {
				if u, ok := e.Data.(*UserMessage); ok {
					fork.title = titleOf(u)
				}
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[h.ID]; ok {
		return Header{}, fmt.Errorf("%w: %s", storeErr(harness.CodeExists), h.ID)
	}
	m.sessions[h.ID] = fork
	return h, nil
}

// changeMeta applies c to session id's Meta.
func (m *memory) changeMeta(ctx context.Context, id string, c MetaChange) (Meta, error) {
	if err := m.cfg.err; err != nil {
		return Meta{}, err
	}
	if err := ctx.Err(); err != nil {
		return Meta{}, err
	}
	if !validID(id) {
		return Meta{}, fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return Meta{}, fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	next, err := s.meta.Apply(c)
	if err != nil {
		return Meta{}, err
	}
	s.meta = next
	return next, nil
}

// Rename implements Store.
func (m *memory) Rename(ctx context.Context, id, title string) error {
	_, err := m.changeMeta(ctx, id, MetaChange{Title: &title})
	return err
}

// Tag implements Store.
func (m *memory) Tag(ctx context.Context, id string, add, remove []string) ([]string, error) {
	meta, err := m.changeMeta(ctx, id, MetaChange{Add: add, Remove: remove})
	return meta.Tags, err
}

// metaSuffix names the file beside a JSONL log that logs the changes of
// its Meta, one JSON line (a MetaChange) each: appended, never
// rewritten, so processes renaming and tagging at once lose nothing.
const metaSuffix = ".meta"

// maxMetaFile bounds a Meta file; past it, changes are refused.
const maxMetaFile = 1 << 20

func (s *jsonlStore) metaPath(id string) string { return filepath.Join(s.dir, id+metaSuffix) }

// readMeta returns session id's Meta.
func (s *jsonlStore) readMeta(id string) Meta {
	data, err := configfile.ReadLimit(s.metaPath(id), maxMetaFile)
	if err != nil {
		return Meta{}
	}
	return readMetaChanges(data)
}

// changeMeta appends c to session id's Meta file.
func (s *jsonlStore) changeMeta(ctx context.Context, id string, c MetaChange) (Meta, error) {
	if err := s.cfg.err; err != nil {
		return Meta{}, err
	}
	if err := ctx.Err(); err != nil {
		return Meta{}, err
	}
	if !validID(id) {
		return Meta{}, fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	if _, err := os.Lstat(s.path(id)); errors.Is(err, iofs.ErrNotExist) {
		return Meta{}, fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	if _, err := s.readMeta(id).Apply(c); err != nil {
		return Meta{}, err
	}
	line, err := json.Marshal(c)
	if err != nil {
		return Meta{}, err
	}
	f, err := os.OpenFile(s.metaPath(id), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return Meta{}, fmt.Errorf("session %s: recording its title and tags: %w", id, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() >= maxMetaFile {
		f.Close()
		return Meta{}, &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf("session %s: its title and tags were changed too often (%s holds %d bytes)", id, s.metaPath(id), fi.Size())}
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Meta{}, fmt.Errorf("session %s: recording its title and tags: %w", id, err)
	}
	return s.readMeta(id), nil
}

// Rename implements Store.
func (s *jsonlStore) Rename(ctx context.Context, id, title string) error {
	_, err := s.changeMeta(ctx, id, MetaChange{Title: &title})
	return err
}

// Tag implements Store.
func (s *jsonlStore) Tag(ctx context.Context, id string, add, remove []string) ([]string, error) {
	meta, err := s.changeMeta(ctx, id, MetaChange{Add: add, Remove: remove})
	return meta.Tags, err
}

// removeMeta removes session id's Meta file, which Delete leaves when
// the session is gone and Create must not inherit.
func (s *jsonlStore) removeMeta(id string) error {
	if err := os.Remove(s.metaPath(id)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	return nil
}

// Fork implements Store. It reads the parent's log twice, without
// holding it: once to find where the fork point's line ends, then to
// copy the bytes before that into the new log, which is written to a
// temporary file and linked under its name as Create does. A torn last
// line is not copied.
func (s *jsonlStore) Fork(ctx context.Context, id string, opts ForkOptions) (Header, error) {
	if err := s.cfg.err; err != nil {
		return Header{}, err
	}
	if err := ctx.Err(); err != nil {
		return Header{}, err
	}
	if err := checkFork(id, opts); err != nil {
		return Header{}, err
	}
	f, err := configfile.Open(s.path(id))
	if errors.Is(err, iofs.ErrNotExist) {
		return Header{}, fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	if err != nil {
		return Header{}, fmt.Errorf("session %s: opening log: %w", id, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	parent, err := readHeader(br, id)
	if err != nil {
		return Header{}, err
	}
	start, end, at, err := forkSpan(ctx, f, br, opts.At)
	if err != nil {
		return Header{}, err
	}
	if opts.At != 0 && at != opts.At {
		return Header{}, noEvent(id, opts.At)
	}
	h, err := prepareHeader(forkHeader(parent, opts, at), s.now())
	if err != nil {
		return Header{}, err
	}
	line, err := marshalHeader(h)
	if err != nil {
		return Header{}, err
	}
	if err := headerTooLarge(h, line, s.cfg.maxLine); err != nil {
		return Header{}, err
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return Header{}, fmt.Errorf("session %s: reading log: %w", id, err)
	}
	body := io.LimitReader(f, end-start)
	if err := s.publish(h.ID, append(line, '\n'), body); err != nil {
		return Header{}, err
	}
	return h, nil
}

// forkSpan reads the events of a log after its header (br reads f from
// its start, the header already read) and returns the byte span of the
// lines to copy: up to and including the event numbered at (the last
// whole line when at is 0), and that event's number.
func forkSpan(ctx context.Context, f *os.File, br *bufio.Reader, at int64) (start, end, seq int64, err error) {
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, 0, 0, err
	}
	start = pos - int64(br.Buffered())
	end = start
	off := start
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, 0, err
			}
		}
		first, lineLen := []byte(nil), int64(0)
		for {
			frag, err := br.ReadSlice('\n')
			if first == nil {
				first = bytes.Clone(frag[:min(len(frag), 64)])
			}
			lineLen += int64(len(frag))
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return 0, 0, 0, err
			}
			if err != nil || len(frag) == 0 || frag[len(frag)-1] != '\n' {
				return start, end, seq, nil // the end, or a torn last line
			}
			break
		}
		off += lineLen
		s, ok := lineSeq(first)
		if !ok {
			continue // not an event line: copied with the rest
		}
		if at == 0 || s <= at {
			end, seq = off, s
		}
		if at != 0 && s == at {
			return start, end, seq, nil
		}
	}
}

// publish creates the log id with the given header line and body: a
// temporary file, written and synced, linked under the log's name
// (failing with harness.CodeExists when the name is taken), then the
// directory synced.
func (s *jsonlStore) publish(id string, header []byte, body io.Reader) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("session: creating store directory: %w", err)
	}
	if _, err := os.Lstat(s.path(id)); err == nil {
		return fmt.Errorf("%w: %s", storeErr(harness.CodeExists), id)
	}
	if err := s.removeMeta(id); err != nil {
		return fmt.Errorf("session %s: removing an old title file: %w", id, err)
	}
	f, err := os.CreateTemp(s.dir, tempPrefix+id+"-*")
	if err != nil {
		return fmt.Errorf("session: creating log: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(header)
	if err == nil {
		_, err = io.Copy(f, body)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session %s: writing log: %w", id, err)
	}
	if runtime.GOOS == "windows" {
		err = os.Rename(tmp, s.path(id)) // no hard links to rely on
	} else {
		err = os.Link(tmp, s.path(id))
	}
	if errors.Is(err, iofs.ErrExist) {
		return fmt.Errorf("%w: %s", storeErr(harness.CodeExists), id)
	}
	if err != nil {
		return fmt.Errorf("session %s: writing log: %w", id, err)
	}
	return s.dirSync.Sync()
}

// orphanMeta reports whether name is a Meta file whose log is gone.
func (s *jsonlStore) orphanMeta(name string) bool {
	id, ok := strings.CutSuffix(name, metaSuffix)
	if !ok || !validID(id) {
		return false
	}
	_, err := os.Lstat(s.path(id))
	return errors.Is(err, iofs.ErrNotExist)
}
