package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/go-harness/harness/internal/configfile"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/storekit"
)

// jsonlStore is the store session.NewJSONL returns, as search reaches its
// files: LogDir's result type is one only the packages of session can name,
// so no other store passes for it.
type jsonlStore interface {
	session.Store
	LogDir() storekit.LogDir
	Stat(ctx context.Context, id string) (session.Info, error)
}

// scanBufferSize is the read size of a log scan; lines longer than it
// grow the buffer.
const scanBufferSize = 128 << 10

// searchJSONL is the search of a JSONL store: a streaming scan of its
// log files, newest first, several at a time. Each log's header is read
// first and a log outside the workspace is not read further; the other
// lines are searched as raw bytes and only lines that may match are
// decoded.
func searchJSONL(ctx context.Context, s jsonlStore, m *searcher) ([]Match, error) {
	if err := s.LogDir().Err; err != nil {
		return nil, err
	}
	m.maxLine = s.LogDir().MaxLine
	if m.mapMin == 0 {
		m.mapMin = scanBufferSize // a log that takes more than one read
	}
	files, err := logFiles(s.LogDir().Path, m.exclude)
	if err != nil {
		return nil, err
	}
	m.tune(sample(s, files))
	bufs := sync.Pool{New: func() any { b := make([]byte, scanBufferSize); return &b }}
	return m.run(ctx, len(files), func(ctx context.Context, i int, ms *matchSink) error {
		bp := bufs.Get().(*[]byte)
		defer bufs.Put(bp)
		h, err := scanFile(ctx, s, files[i].ID, m, bp, ms)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil // gone or unreadable: nothing to find
		}
		if len(ms.matches) == 0 {
			return nil
		}
		info := session.Info{Header: h, Updated: files[i].Mod, Size: files[i].Size}
		if d, err := s.Stat(ctx, files[i].ID); err == nil {
			info = d
		}
		for j := range ms.matches {
			ms.matches[j].Session = info
		}
		return nil
	})
}

// logPath is the file of session id in a JSONL store, named as logFiles
// finds it.
func logPath(s jsonlStore, id string) string { return filepath.Join(s.LogDir().Path, id+".jsonl") }

// logFiles returns the logs in dir, newest first by modification time
// (as the JSONL store lists them), leaving out the ids in skip.
func logFiles(dir string, skip map[string]bool) ([]storekit.LogFile, error) {
	files, err := storekit.LogFiles(dir, skip, storekit.ValidID)
	if err != nil {
		return nil, fmt.Errorf("search: listing %s: %w", dir, err)
	}
	return files, nil
}

// parseHeader decodes the first line of a log; a line that is no header
// of this format is an error, and the log is not searched.
func parseHeader(line []byte) (session.Header, error) {
	var hl struct {
		Type string `json:"type"`
		session.Header
	}
	if err := json.Unmarshal(bytes.TrimSpace(line), &hl); err != nil || hl.Type != "session" {
		return session.Header{}, errors.New("search: the first line is not a session header")
	}
	if hl.Format != storekit.FormatVersion {
		return session.Header{}, fmt.Errorf("search: log format %d, not %d", hl.Format, storekit.FormatVersion)
	}
	return hl.Header, nil
}

// sampleSize is how much of the newest logs a search reads to learn
// which bytes are rare.
const sampleSize = 256 << 10

// sample returns the start of the newest logs, up to sampleSize bytes.
func sample(s jsonlStore, files []storekit.LogFile) []byte {
	buf := make([]byte, 0, sampleSize)
	for _, lf := range files {
		f, err := configfile.Open(logPath(s, lf.ID))
		if err != nil {
			continue
		}
		n, _ := io.ReadFull(f, buf[len(buf):cap(buf)])
		f.Close()
		buf = buf[:len(buf)+n]
		if len(buf) == cap(buf) {
			break
		}
	}
	return buf
}

// scanFile searches one log. It returns the log's header; a log outside
// the search's workspace is not read past it.
func scanFile(ctx context.Context, s jsonlStore, id string, m *searcher, bp *[]byte, ms *matchSink) (session.Header, error) {
	f, err := configfile.Open(logPath(s, id))
	if err != nil {
		return session.Header{}, err
	}
	defer f.Close()
	if m.mapMin > 0 {
		if st, err := f.Stat(); err == nil && st.Size() >= int64(m.mapMin) {
			if data, unmap, ok := mapFile(f, st.Size()); ok {
				defer unmap()
				return scanMapped(ctx, data, m, ms)
			}
		}
	}
	buf := *bp
	n, err := io.ReadFull(f, buf)
	eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	if err != nil && !eof {
		return session.Header{}, err
	}
	nl := bytes.IndexByte(buf[:n], '\n')
	if nl < 0 {
		if eof {
			return session.Header{}, errors.New("search: no complete header line")
		}
		// A first line longer than a buffer is no header.
		return session.Header{}, errors.New("search: the first line is not a session header")
	}
	h, err := parseHeader(buf[:nl])
	if err != nil {
		return session.Header{}, err
	}
	if m.excluded(h) {
		return h, nil
	}
	start, end := nl+1, n
	for {
		if err := ctx.Err(); err != nil {
			return h, err
		}
		data := buf[start:end]
		last := bytes.LastIndexByte(data, '\n')
		if eof {
			// The last line may lack its newline (a torn write, or a
			// complete event whose newline was lost).
			m.scanLines(data, ms)
			return h, nil
		}
		if last >= 0 {
			if m.scanLines(data[:last+1], ms) {
				return h, nil
			}
			start += last + 1
		}
		// Move the partial line to the front and read more; grow the
		// buffer for a line that does not fit, up to the longest line the
		// store reads, and stream past a longer one.
		rest := copy(buf, buf[start:end])
		if rest > s.LogDir().MaxLine {
			if rest, eof, err = skipLine(f, buf); err != nil {
				return h, err
			}
			start, end = 0, rest
			continue
		}
		if rest == len(buf) {
			size := min(2*len(buf), s.LogDir().MaxLine+1)
			buf = slices.Grow(buf[:rest], size-rest)[:size]
			*bp = buf
		}
		n, err := io.ReadFull(f, buf[rest:])
		eof = errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return h, err
		}
		start, end = 0, rest+n
	}
}

// mappedChunk is how much of a mapped log is scanned between checks of
// the context.
const mappedChunk = 1 << 20

// scanMapped searches a log mapped into memory, as scanFile searches
// one it reads: the header must end within the first scanBufferSize
// bytes, and the last line may lack its newline. A log that shrinks
// while it is mapped faults on the pages past its new end: the fault is
// recovered and the log counts as unreadable.
func scanMapped(ctx context.Context, data []byte, m *searcher, ms *matchSink) (h session.Header, err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			ms.matches = ms.matches[:0]
			h, err = session.Header{}, errors.New("search: the log shrank while it was searched")
		}
	}()
	nl := bytes.IndexByte(data[:min(len(data), scanBufferSize)], '\n')
	if nl < 0 {
		if len(data) < scanBufferSize {
			return session.Header{}, errors.New("search: no complete header line")
		}
		return session.Header{}, errors.New("search: the first line is not a session header")
	}
	if h, err = parseHeader(data[:nl]); err != nil {
		return session.Header{}, err
	}
	if m.excluded(h) {
		return h, nil
	}
	for start := nl + 1; start < len(data); {
		if err := ctx.Err(); err != nil {
			return h, err
		}
		end := min(len(data), start+mappedChunk)
		end = min(len(data), indexByteFrom(data, end, '\n')+1)
		if m.scanLines(data[start:end], ms) {
			return h, nil
		}
		start = end
	}
	return h, nil
}

// skipLine reads past the rest of a line, using buf, and returns with
// what followed its newline moved to the front of buf.
func skipLine(f io.Reader, buf []byte) (rest int, eof bool, err error) {
	for {
		n, err := io.ReadFull(f, buf)
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return 0, false, err
		}
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return copy(buf, buf[i+1:n]), eof, nil
		}
		if eof {
			return 0, true, nil
		}
	}
}
