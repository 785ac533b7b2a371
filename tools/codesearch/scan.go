package codesearch

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/textmatch"
)

// outputMode is grep's output_mode.
type outputMode string

const (
	modeFiles   outputMode = "files_with_matches"
	modeContent outputMode = "content"
	modeCount   outputMode = "count"
)

// shownLine is a line of content output.
type shownLine struct {
	n     int
	text  string
	match bool
}

// fileResult is what searching one file found.
type fileResult struct {
	info    fs.FileInfo
	rel     string
	count   int // matching lines (matches, in multiline mode)
	lines   []shownLine
	matches int // matching lines kept in lines
}

// errBinary reports a file skipped for holding a NUL byte; errBinaryMatch
// one that also held a match before the NUL.
var (
	errBinary      = errors.New("binary file")
	errBinaryMatch = errors.New("binary file matches")
)

// errTooLarge reports a file too large for a multiline search.
var errTooLarge = errors.New("too large for multiline")

// scanner searches files one at a time; each worker has its own.
type scanner struct {
	m             *textmatch.Matcher
	mode          outputMode
	before, after int
	keep          int // most matching lines to keep per file
	buf           []byte
	// chunk and maxLine size the buffer (tests make them small).
	chunk, maxLine int
}

// open opens a file for reading. A stream is read to the size the file
// had when it was opened (a file that reports none, as those of /proc
// do, to its end), which spares the read that would find the end.
// It also returns the file's description as of the open.
func (s *scanner) open(ctx context.Context, fsys fs.FileSystem, p string) (io.ReadCloser, fs.FileInfo, error) {
	if o, ok := fsys.(fs.Opener); ok {
		rc, info, err := o.Open(ctx, p)
		if err != nil || info.Size <= 0 {
			return rc, info, err
		}
		return limitedFile{io.LimitReader(rc, info.Size), rc}, info, nil
	}
	data, info, err := fsys.ReadBytes(ctx, p, 1<<30)
	if err != nil {
		return nil, fs.FileInfo{}, err
	}
	return io.NopCloser(bytes.NewReader(data)), info, nil
}

type limitedFile struct {
	io.Reader
	io.Closer
}

// scan searches the file of e. A file with a NUL byte is errBinary.
func (s *scanner) scan(ctx context.Context, fsys fs.FileSystem, e entry) (*fileResult, error) {
	if s.m.Multiline() && e.info.Size > maxMultiline {
		return nil, errTooLarge
	}
	if e.fsys != nil {
		fsys = e.fsys
	}
	rc, opened, err := s.open(ctx, fsys, e.info.Path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	info := e.info
	if info.ModTime.IsZero() {
		// Listed without a status call (walker.types): the open says.
		info.Size, info.Mode, info.ModTime = opened.Size, opened.Mode, opened.ModTime
		if s.m.Multiline() && info.Size > maxMultiline {
			return nil, errTooLarge
		}
	}
	res := &fileResult{info: info, rel: e.rel}
	if s.m.Multiline() {
		return res, s.scanWhole(rc, res)
	}
	return res, s.scanLines(ctx, rc, res)
}

// emitter builds content output with context, line by line in order.
type emitter struct {
	res     *fileResult
	last    int // number of the last line shown; 0 none
	afterTo int // lines up to this number are after-context
}

func (em *emitter) add(n int, line []byte, match bool) {
	if n <= em.last {
		if match {
			for i := len(em.res.lines) - 1; i >= 0 && em.res.lines[i].n >= n; i-- {
				if l := &em.res.lines[i]; l.n == n && !l.match {
					l.match = true
					em.res.matches++
				}
			}
		}
		return
	}
	em.last = n
	em.res.lines = append(em.res.lines, shownLine{n: n, text: showLine(line), match: match})
	if match {
		em.res.matches++
	}
}

// scanLines streams the file through a buffer, line by line.
func (s *scanner) scanLines(ctx context.Context, r io.Reader, res *fileResult) error {
	if s.chunk == 0 {
		s.chunk, s.maxLine = chunkSize, maxLineBuf
	}
	if cap(s.buf) < s.chunk {
		s.buf = make([]byte, 0, s.chunk)
	}
	buf := s.buf[:0]
	em := &emitter{res: res}
	pos, posLine := 0, 1 // start of the unprocessed text and its line number
	eof := false
	for !eof {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(buf) == cap(buf) {
			if cap(buf) >= s.maxLine {
				// A line longer than the buffer: match it in pieces.
				if err := s.region(buf, pos, len(buf), &posLine, em, res, true); err != nil {
					return err
				}
				buf, pos = buf[:0], 0
			} else {
				nb := make([]byte, len(buf), 2*cap(buf))
				copy(nb, buf)
				buf = nb
				s.buf = nb
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			if z := bytes.IndexByte(buf[len(buf):len(buf)+n], 0); z >= 0 {
				if _, _, ok := s.m.NextLine(buf[:len(buf)+z], 0); ok || res.count > 0 {
					return errBinaryMatch
				}
				return errBinary
			}
		}
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			eof = true
		case err != nil:
			return err
		case n == 0:
			continue
		}
		end := len(buf)
		if !eof {
			end = bytes.LastIndexByte(buf[pos:], '\n') + pos + 1
			if end <= pos {
				continue // no complete line yet
			}
		}
		if err := s.region(buf, pos, end, &posLine, em, res, false); err != nil {
			return err
		}
		if s.mode == modeFiles && res.count > 0 {
			return nil
		}
		// Keep the last lines before end for before-context, and the
		// partial line after it.
		keep := end
		for i := 0; i < s.before && keep > 0; i++ {
			j := bytes.LastIndexByte(buf[:keep-1], '\n')
			keep = j + 1
			if j < 0 {
				break
			}
		}
		rest := copy(buf, buf[keep:])
		buf = buf[:rest]
		pos = end - keep
	}
	return nil
}

// region searches the complete lines of buf[pos:end] (the last one may
// lack its newline at the end of the file, or be a piece of a long line
// when cut). Lines before pos are context only.
func (s *scanner) region(buf []byte, pos, end int, posLine *int, em *emitter, res *fileResult, cut bool) error {
	data := buf[:end]
	for pos < end {
		ls, le, ok := s.m.NextLine(data, pos)
		if !ok {
			ls = end
		}
		if s.mode == modeContent {
			// After-context of the previous match.
			for em.afterTo >= *posLine && pos < ls {
				e := lineEnd(data, pos)
				em.add(*posLine, data[pos:e], false)
				if e >= end {
					// The last line of the region: a cut one goes on.
					pos = end
					if !cut {
						*posLine++
					}
					break
				}
				pos, *posLine = e+1, *posLine+1
			}
		}
		if !ok {
			*posLine += bytes.Count(data[pos:end], []byte{'\n'})
			return nil
		}
		n := *posLine + bytes.Count(data[pos:ls], []byte{'\n'})
		res.count++
		if s.mode == modeFiles {
			return nil
		}
		if s.mode == modeContent && res.matches >= s.keep && n <= em.afterTo {
			em.add(n, data[ls:le], false) // past the limit: context of the last match shown
		}
		if s.mode == modeContent && res.matches < s.keep {
			// Before-context, as far back as the buffer holds.
			start := ls
			for i := 0; i < s.before && start > 0; i++ {
				start = bytes.LastIndexByte(data[:start-1], '\n') + 1
			}
			ln := n - bytes.Count(data[start:ls], []byte{'\n'})
			for p := start; p < ls; ln++ {
				e := lineEnd(data, p)
				em.add(ln, data[p:e], false)
				p = e + 1
			}
			em.add(n, data[ls:le], true)
			em.afterTo = n + s.after
		}
		if le >= end {
			*posLine = n
			if !cut || (end > 0 && data[end-1] == '\n') {
				*posLine = n + 1
			}
			return nil
		}
		pos, *posLine = le+1, n+1
	}
	return nil
}

func lineEnd(data []byte, p int) int {
	if i := bytes.IndexByte(data[p:], '\n'); i >= 0 {
		return p + i
	}
	return len(data)
}

// scanWhole searches a whole file in multiline mode.
func (s *scanner) scanWhole(r io.Reader, res *fileResult) error {
	data, err := io.ReadAll(io.LimitReader(r, maxMultiline+1))
	if err != nil {
		return err
	}
	if len(data) > maxMultiline {
		return errTooLarge
	}
	if z := bytes.IndexByte(data, 0); z >= 0 {
		if len(s.m.FindAll(data[:z], 1)) > 0 {
			return errBinaryMatch
		}
		return errBinary
	}
	n := -1
	if s.mode == modeFiles {
		n = 1
	}
	em := &emitter{res: res}
	line, at := 1, 0 // line number of position at
	for _, loc := range s.m.FindAll(data, n) {
		res.count++
		if s.mode != modeContent || res.matches >= s.keep {
			continue
		}
		line += bytes.Count(data[at:loc[0]], []byte{'\n'})
		at = loc[0]
		// Lines from before-context through the match and after-context.
		start := bytes.LastIndexByte(data[:loc[0]], '\n') + 1
		first := line
		for i := 0; i < s.before && start > 0; i++ {
			start = bytes.LastIndexByte(data[:start-1], '\n') + 1
			first--
		}
		last := line + bytes.Count(data[loc[0]:max(loc[0], loc[1]-1)], []byte{'\n'})
		ln := first
		for p := start; p <= len(data) && ln <= last+s.after; ln++ {
			if p == len(data) && (p == 0 || data[p-1] == '\n') {
				break
			}
			e := lineEnd(data, p)
			em.add(ln, data[p:e], ln >= line && ln <= last)
			p = e + 1
		}
	}
	return nil
}
