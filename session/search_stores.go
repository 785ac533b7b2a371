package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"sync"
)

// scanBufferSize is the read size of a log scan; lines longer than it
// grow the buffer.
const scanBufferSize = 1 << 20

// Search implements Searcher: a streaming scan of the log files, newest
// first, several at a time. Each log's header is read first and a log
// outside the workspace is not read further; the other lines are searched
// as raw bytes and only lines that may match are decoded.
func (s *JSONL) Search(ctx context.Context, opts SearchOptions) ([]Match, error) {
	m, err := compileSearch(opts)
	if err != nil {
		return nil, err
	}
	m.maxLine = s.cfg.maxLine
	files, err := s.logFiles(m.exclude)
	if err != nil {
		return nil, err
	}
	m.pre.tune(s.sample(files))
	bufs := sync.Pool{New: func() any { b := make([]byte, scanBufferSize); return &b }}
	return m.run(ctx, len(files), func(ctx context.Context, i int, ms *matchSink) error {
		bp := bufs.Get().(*[]byte)
		defer bufs.Put(bp)
		h, err := s.scanFile(ctx, files[i].id, m, bp, ms)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil // gone or unreadable: nothing to find
		}
		if len(ms.matches) == 0 {
			return nil
		}
		info := Info{Header: h, Updated: files[i].mod, Size: files[i].size}
		if d, err := s.describe(files[i], ""); err == nil {
			info = *d
		}
		for j := range ms.matches {
			ms.matches[j].Session = info
		}
		return nil
	})
}

// sampleSize is how much of the newest logs a search reads to learn
// which bytes are rare.
const sampleSize = 256 << 10

// sample returns the start of the newest logs, up to sampleSize bytes.
func (s *JSONL) sample(files []logFile) []byte {
	buf := make([]byte, 0, sampleSize)
	for _, lf := range files {
		f, err := os.Open(s.Path(lf.id))
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
func (s *JSONL) scanFile(ctx context.Context, id string, m *searcher, bp *[]byte, ms *matchSink) (Header, error) {
	f, err := os.Open(s.Path(id))
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	buf := *bp
	n, err := io.ReadFull(f, buf)
	eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	if err != nil && !eof {
		return Header{}, err
	}
	nl := bytes.IndexByte(buf[:n], '\n')
	if nl < 0 {
		if eof {
			return Header{}, errors.New("session: no complete header line")
		}
		// A first line longer than a buffer is no header.
		return Header{}, errors.New("session: the first line is not a session header")
	}
	h, err := parseHeader(buf[:nl], id)
	if err != nil {
		return Header{}, err
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
		if rest > s.cfg.maxLine {
			if rest, eof, err = skipLine(f, buf); err != nil {
				return h, err
			}
			start, end = 0, rest
			continue
		}
		if rest == len(buf) {
			size := min(2*len(buf), s.cfg.maxLine+1)
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

// Search implements Searcher over the encoded lines the store keeps,
// exactly as JSONL searches its files.
func (m *Memory) Search(ctx context.Context, opts SearchOptions) ([]Match, error) {
	sr, err := compileSearch(opts)
	if err != nil {
		return nil, err
	}
	sr.maxLine = m.cfg.maxLine
	type snap struct {
		info  Info
		lines [][]byte
	}
	m.mu.Lock()
	var snaps []snap
	for _, s := range m.sessions {
		if sr.excluded(s.header) {
			continue
		}
		// Lines are never changed once appended: share them.
		snaps = append(snaps, snap{
			info:  Info{Header: s.header, Title: s.title, Updated: s.updated, Size: s.size},
			lines: s.lines[:len(s.lines):len(s.lines)],
		})
	}
	m.mu.Unlock()
	infos := make([]Info, len(snaps))
	for i, s := range snaps {
		infos[i] = s.info
	}
	sortInfos(infos)
	byID := make(map[string][][]byte, len(snaps))
	for _, s := range snaps {
		byID[s.info.Header.ID] = s.lines
	}
	var sample []byte
	for _, in := range infos {
		for _, l := range byID[in.Header.ID] {
			sample = append(sample, l[:min(len(l), sampleSize-len(sample))]...)
			if len(sample) >= sampleSize {
				break
			}
		}
		if len(sample) >= sampleSize {
			break
		}
	}
	sr.pre.tune(sample)
	return sr.searchLines(ctx, infos, func(_ context.Context, i int) ([][]byte, error) {
		return byID[infos[i].Header.ID], nil
	})
}
