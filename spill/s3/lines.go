package s3

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/minio/minio-go/v7"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// lineStep is how many lines apart the line index records a start.
const lineStep = 512

// lineIndex locates lines in a saved output: the byte offset where line
// i*Step+1 starts, for every i, with the output's size and line count
// (a final line without a line feed counts, as fs.ScanText counts). It
// is saved beside the output, as <key>.lines.
type lineIndex struct {
	Size   int64   `json:"size"`
	Lines  int     `json:"lines"`
	Step   int     `json:"step"`
	Starts []int64 `json:"starts"`
	// Probe reports a NUL byte in the first bytes fs.ScanText probes: the
	// output is binary, whatever window is read.
	Probe bool `json:"nul_in_probe,omitempty"`
}

// indexer builds a line index from the bytes it sees.
type indexer struct {
	idx  lineIndex
	last byte
}

func newIndexer() *indexer { return &indexer{idx: lineIndex{Step: lineStep, Starts: []int64{0}}} }

// binaryProbe is how many leading bytes fs.ScanText searches for a NUL.
const binaryProbe = 8 << 10

func (x *indexer) Write(p []byte) (int, error) {
	if x.idx.Size < binaryProbe && bytes.IndexByte(p[:min(len(p), int(binaryProbe-x.idx.Size))], 0) >= 0 {
		x.idx.Probe = true
	}
	off := x.idx.Size
	for rest := p; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		x.idx.Lines++
		off += int64(i + 1)
		if x.idx.Lines%lineStep == 0 {
			x.idx.Starts = append(x.idx.Starts, off)
		}
		rest = rest[i+1:]
	}
	x.idx.Size += int64(len(p))
	if len(p) > 0 {
		x.last = p[len(p)-1]
	}
	return len(p), nil
}

func (x *indexer) done() lineIndex {
	idx := x.idx
	if idx.Size > 0 && x.last != '\n' {
		idx.Lines++
	}
	return idx
}

// ReadWindow reads a window of a saved output's lines, as fs.ScanText
// reads it from Open's reader, but fetching only the bytes of the lines
// it needs (a ranged request found with the output's line index) instead
// of the whole object. The read tool uses it for its offset and limit
// when the output store has it. An output saved without an index, and a
// window past the end, are scanned whole.
func (s *store) ReadWindow(ctx context.Context, locator string, w fs.Window) (*fs.Text, error) {
	rc, err := s.Open(ctx, locator)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	obj := rc.(*minio.Object)
	idx, ok := s.index(ctx, locator)
	offset := max(w.Offset, 1)
	limit := w.Limit
	if limit <= 0 {
		limit = fs.DefaultLimit
	}
	if !ok || idx.Probe || offset > idx.Lines || idx.Step <= 0 {
		return fs.ScanText(ctx, obj, w)
	}
	b := (offset - 1) / idx.Step
	if b >= len(idx.Starts) {
		return fs.ScanText(ctx, obj, w)
	}
	first := b*idx.Step + 1
	last := min(offset+limit-1, idx.Lines)
	e := (last-1)/idx.Step + 1
	end := idx.Size
	if e < len(idx.Starts) {
		end = idx.Starts[e]
	}
	start := idx.Starts[b]
	bom := false
	if start > 0 {
		head := make([]byte, len(fsimpl.BOM))
		if n, _ := obj.ReadAt(head, 0); n == len(head) && string(head) == fsimpl.BOM {
			bom = true
		}
	}
	part := io.NewSectionReader(obj, start, end-start)
	sub := w
	sub.Offset = offset - first + 1
	t, err := fs.ScanText(ctx, part, sub)
	if err != nil {
		return nil, err
	}
	t.Offset += first - 1
	t.TotalLines = idx.Lines
	t.Size = idx.Size
	t.BOM = t.BOM || bom
	return t, nil
}

func (s *store) indexKey(locator string) string {
	return s.prefix + locator[len("spill://"):] + ".lines"
}

// index loads an output's line index.
func (s *store) index(ctx context.Context, locator string) (lineIndex, bool) {
	obj, err := s.client.GetObject(ctx, s.bucket, s.indexKey(locator), minio.GetObjectOptions{})
	if err != nil {
		return lineIndex{}, false
	}
	defer obj.Close()
	var idx lineIndex
	if err := json.NewDecoder(io.LimitReader(obj, 64<<20)).Decode(&idx); err != nil {
		return lineIndex{}, false
	}
	return idx, true
}

// saveIndex stores an output's line index beside it.
func (s *store) saveIndex(ctx context.Context, key string, idx lineIndex) error {
	b, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, s.bucket, key+".lines", bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{ContentType: "application/json"})
	if err != nil {
		return fmt.Errorf("saving the line index: %w", err)
	}
	return nil
}
