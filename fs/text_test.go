package fs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
)

func scan(t *testing.T, data string, w fs.Window) (*fs.Text, error) {
	t.Helper()
	return fs.ScanText(context.Background(), strings.NewReader(data), w)
}

func texts(ls []fs.Line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Text
	}
	return out
}

func TestScanTextWindows(t *testing.T) {
	cases := []struct {
		name   string
		data   string
		w      fs.Window
		lines  []string
		offset int
		total  int
		capped bool
		crlf   bool
		bom    bool
	}{
		{name: "empty", data: "", lines: []string{}, offset: 1, total: 0},
		{name: "one line no newline", data: "a", lines: []string{"a"}, offset: 1, total: 1},
		{name: "one line", data: "a\n", lines: []string{"a"}, offset: 1, total: 1},
		{name: "blank lines", data: "\n\n", lines: []string{"", ""}, offset: 1, total: 2},
		{name: "last line open", data: "a\nb", lines: []string{"a", "b"}, offset: 1, total: 2},
		{name: "crlf", data: "a\r\nb\r\nc", lines: []string{"a", "b", "c"}, offset: 1, total: 3, crlf: true},
		{name: "lone cr kept", data: "a\rb\n", lines: []string{"a\rb"}, offset: 1, total: 1},
		{name: "bom", data: fs.BOM + "x\ny\n", lines: []string{"x", "y"}, offset: 1, total: 2, bom: true},
		{name: "bom only", data: fs.BOM, lines: []string{}, offset: 1, total: 0, bom: true},
		{name: "offset", data: "1\n2\n3\n4\n5\n", w: fs.Window{Offset: 3}, lines: []string{"3", "4", "5"}, offset: 3, total: 5},
		{name: "limit", data: "1\n2\n3\n4\n5\n", w: fs.Window{Offset: 2, Limit: 2}, lines: []string{"2", "3"}, offset: 2, total: 5},
		{name: "last line", data: "1\n2\n3", w: fs.Window{Offset: 3}, lines: []string{"3"}, offset: 3, total: 3},
		{name: "byte cap", data: "aaaa\nbbbb\ncccc\n", w: fs.Window{MaxBytes: 10}, lines: []string{"aaaa", "bbbb"}, offset: 1, total: 3, capped: true},
		{name: "first line always shown", data: "aaaaaaaaaa\nb\n", w: fs.Window{MaxBytes: 3}, lines: []string{"aaaaaaaaaa"}, offset: 1, total: 2, capped: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := scan(t, c.data, c.w)
			require.NoError(t, err)
			assert.Equal(t, c.lines, texts(got.Lines))
			assert.Equal(t, c.offset, got.Offset)
			assert.Equal(t, c.total, got.TotalLines)
			assert.Equal(t, c.capped, got.Capped)
			assert.Equal(t, c.crlf, got.CRLF)
			assert.Equal(t, c.bom, got.BOM)
			assert.Equal(t, int64(len(c.data)), got.Size)
		})
	}
}

func TestScanTextWhole(t *testing.T) {
	got, err := scan(t, "a\nb\n", fs.Window{})
	require.NoError(t, err)
	assert.Equal(t, []fs.Line{{Text: "a"}, {Text: "b"}}, got.Lines)
	assert.Equal(t, 1, got.Offset)
	assert.Equal(t, 2, got.TotalLines)
	got, err = scan(t, "a\nb\n", fs.Window{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, []fs.Line{{Text: "a"}}, got.Lines)
	assert.Equal(t, 2, got.TotalLines, "the total counts the lines past the window")
	got, err = scan(t, "a\nbbbb\n", fs.Window{MaxLineRunes: 2})
	require.NoError(t, err)
	assert.Equal(t, []fs.Line{{Text: "a"}, {Text: "bb", Cut: 2}}, got.Lines)
}

func TestScanTextCutsLongLines(t *testing.T) {
	long := strings.Repeat("é", 10) // 2 bytes each
	got, err := scan(t, "x\n"+long+"\r\nend", fs.Window{MaxLineRunes: 4})
	require.NoError(t, err)
	require.Len(t, got.Lines, 3)
	assert.Equal(t, fs.Line{Text: "éééé", Cut: 6}, got.Lines[1], "six characters cut, the CR is not one of them")
	assert.Equal(t, fs.Line{Text: "end"}, got.Lines[2])

	// A line of exactly the limit followed by CR LF is not cut.
	got, err = scan(t, "abcd\r\n", fs.Window{MaxLineRunes: 4})
	require.NoError(t, err)
	assert.Equal(t, []fs.Line{{Text: "abcd"}}, got.Lines)
}

func TestScanTextPastEnd(t *testing.T) {
	_, err := scan(t, "1\n2\n3\n", fs.Window{Offset: 4})
	require.ErrorIs(t, err, harness.CodePastEnd)
	var fe *fs.PathError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, int64(3), fe.Total)
	assert.Contains(t, fe.Error(), "the file has 3 lines")

	_, err = scan(t, "", fs.Window{Offset: 2})
	require.ErrorIs(t, err, harness.CodePastEnd)
}

func TestScanTextNotText(t *testing.T) {
	_, err := scan(t, "abc\x00def", fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotText)
	assert.Contains(t, err.Error(), "NUL byte at byte offset 3")

	// A NUL past the probe only matters in a selected line.
	far := strings.Repeat("x\n", fs.BinaryProbe) + "nul\x00\n"
	_, err = scan(t, far, fs.Window{Limit: 10})
	require.NoError(t, err)
	_, err = scan(t, far, fs.Window{Offset: fs.BinaryProbe + 1})
	require.ErrorIs(t, err, harness.CodeNotText)

	_, err = scan(t, "ok\nbad \xff\n", fs.Window{})
	require.ErrorIs(t, err, harness.CodeNotText)
	var fe *fs.PathError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, []int{2}, fe.Lines)
	_, err = scan(t, "ok\nbad \xff\n", fs.Window{Limit: 1})
	require.NoError(t, err, "invalid UTF-8 outside the window does not matter")
}

func TestScanTextAborted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fs.ScanText(ctx, strings.NewReader("a\n"), fs.Window{})
	require.ErrorIs(t, err, harness.CodeAborted)
	require.ErrorIs(t, err, context.Canceled)
}

func TestScanTextReadError(t *testing.T) {
	_, err := fs.ScanText(context.Background(), iotest.ErrReader(errors.New("disk on fire")), fs.Window{})
	require.ErrorIs(t, err, harness.CodeIO)
	assert.Contains(t, err.Error(), "disk on fire")
}

// naiveWindow is the specification of ScanText written the obvious way.
func naiveWindow(data []byte, w fs.Window) (*fs.Text, error) {
	if w.Offset <= 0 {
		w.Offset = 1
	}
	if w.Limit <= 0 {
		w.Limit = fs.DefaultLimit
	}
	if w.MaxLineRunes <= 0 {
		w.MaxLineRunes = fs.DefaultMaxLineRunes
	}
	if w.MaxBytes <= 0 {
		w.MaxBytes = fs.DefaultMaxBytes
	}
	t := &fs.Text{Offset: w.Offset, Size: int64(len(data))}
	body := data
	if bytes.HasPrefix(body, []byte(fs.BOM)) {
		t.BOM = true
		body = body[len(fs.BOM):]
	}
	if i := bytes.IndexByte(data[:min(len(data), fs.BinaryProbe)], 0); i >= 0 {
		return nil, harness.CodeNotText
	}
	var lines []string
	if len(body) > 0 {
		lines = strings.Split(string(body), "\n")
		if body[len(body)-1] == '\n' {
			lines = lines[:len(lines)-1]
		}
	}
	t.TotalLines = len(lines)
	crlf, lf := 0, 0
	shown := 0
	for i := w.Offset - 1; i < len(lines) && len(t.Lines) < w.Limit; i++ {
		l := lines[i]
		feed := i < len(lines)-1 || body[len(body)-1] == '\n'
		if feed {
			if strings.HasSuffix(l, "\r") {
				l = l[:len(l)-1]
				crlf++
			} else {
				lf++
			}
		}
		kept, runes := 0, 0
		for kept < len(l) {
			if utf8.RuneStart(l[kept]) {
				if runes == w.MaxLineRunes {
					break
				}
				runes++
			}
			kept++
		}
		var cut int64
		for j := kept; j < len(l); j++ {
			if utf8.RuneStart(l[j]) {
				cut++
			}
		}
		text := l[:kept]
		if len(t.Lines) > 0 && shown+len(text)+1 > w.MaxBytes {
			t.Capped = true
			break
		}
		if strings.IndexByte(text, 0) >= 0 || !utf8.ValidString(text) {
			return nil, harness.CodeNotText
		}
		t.Lines = append(t.Lines, fs.Line{Text: text, Cut: cut})
		shown += len(text) + 1
	}
	t.CRLF = crlf > lf
	if w.Offset > t.TotalLines && !(w.Offset == 1 && t.TotalLines == 0) {
		return nil, harness.CodePastEnd
	}
	return t, nil
}

func checkScan(t *testing.T, data []byte, w fs.Window) {
	t.Helper()
	want, wantErr := naiveWindow(data, w)
	readers := map[string]io.Reader{
		"bulk":     bytes.NewReader(data),
		"one byte": iotest.OneByteReader(bytes.NewReader(data)),
		"half":     iotest.HalfReader(bytes.NewReader(data)),
		// Sizes ScanText cannot see, and one it sees (its first read).
		"unsized": struct{ io.Reader }{bytes.NewReader(data)},
		"limited": io.LimitReader(struct{ io.Reader }{bytes.NewReader(data)}, int64(len(data))),
	}
	for name, r := range readers {
		got, err := fs.ScanText(context.Background(), r, w)
		if wantErr != nil {
			require.ErrorIs(t, err, wantErr, "%s reader", name)
			continue
		}
		require.NoError(t, err, "%s reader", name)
		require.Equal(t, want.Lines, got.Lines, "%s reader", name)
		require.Equal(t, want.TotalLines, got.TotalLines, "%s reader", name)
		require.Equal(t, want.Capped, got.Capped, "%s reader", name)
		require.Equal(t, want.BOM, got.BOM, "%s reader", name)
		require.Equal(t, want.CRLF, got.CRLF, "%s reader", name)
		require.Equal(t, want.Size, got.Size, "%s reader", name)
	}
}

func TestScanTextMatchesSpecification(t *testing.T) {
	data := []byte(fs.BOM + "alpha\r\nβeta is long\n\ngamma\r\n" + strings.Repeat("z", 300) + "\nlast")
	for offset := 0; offset <= 7; offset++ {
		for _, limit := range []int{0, 1, 2, 5} {
			for _, runes := range []int{0, 3, 5} {
				for _, maxBytes := range []int{0, 8, 20} {
					checkScan(t, data, fs.Window{Offset: offset, Limit: limit, MaxLineRunes: runes, MaxBytes: maxBytes})
				}
			}
		}
	}
}

func TestScanTextAcrossGrowingReads(t *testing.T) {
	// Reads that fill the buffer grow it (8 KiB, 32, 128, 256): lines and
	// a window cross each change of size.
	var b strings.Builder
	for i := 0; b.Len() < 700<<10; i++ {
		b.WriteString(strings.Repeat("é", i%97))
		b.WriteString("\r\n")
	}
	data := []byte(b.String())
	checkScan(t, data, fs.Window{})
	for _, at := range []int{8 << 10, 40 << 10, 168 << 10, 424 << 10} {
		line := bytes.Count(data[:at], []byte("\n"))
		checkScan(t, data, fs.Window{Offset: line - 2, Limit: 5, MaxLineRunes: 50, MaxBytes: 1 << 20})
	}
}

func TestScanTextSmallReaderSmallBuffer(t *testing.T) {
	// A small text costs a small buffer, not the largest read; an
	// unsized reader's first read is 8 KiB.
	data := "notes\nEND\n"
	for name, r := range map[string]func() io.Reader{
		"sized": func() io.Reader { return strings.NewReader(data) },
		"limited": func() io.Reader {
			return io.LimitReader(struct{ io.Reader }{strings.NewReader(data)}, int64(len(data)))
		},
		"unsized": func() io.Reader { return struct{ io.Reader }{strings.NewReader(data)} },
	} {
		const scans = 50
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range scans {
			got, err := fs.ScanText(context.Background(), r(), fs.Window{})
			require.NoError(t, err)
			require.Equal(t, []string{"notes", "END"}, texts(got.Lines))
		}
		runtime.ReadMemStats(&after)
		limit := uint64(4 << 10)
		if name == "unsized" {
			limit = 12 << 10
		}
		assert.Less(t, (after.TotalAlloc-before.TotalAlloc)/scans, limit, "bytes allocated by one scan of a %d-byte text (%s reader)", len(data), name)
	}
}

func TestScanTextHugeLineBoundedMemory(t *testing.T) {
	// A 64 MiB line without a newline is counted, not kept.
	r := io.LimitReader(repeatReader('q'), 64<<20)
	got, err := fs.ScanText(context.Background(), io.MultiReader(strings.NewReader("head\n"), r), fs.Window{})
	require.NoError(t, err)
	require.Len(t, got.Lines, 2)
	assert.Equal(t, strings.Repeat("q", fs.DefaultMaxLineRunes), got.Lines[1].Text)
	assert.Equal(t, int64(64<<20-fs.DefaultMaxLineRunes), got.Lines[1].Cut)
	assert.Equal(t, 2, got.TotalLines)
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func FuzzScanText(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), 1, 2, 3, 10)
	f.Add([]byte(fs.BOM+"x\n\xff\n"), 2, 0, 0, 0)
	f.Add([]byte("\x00"), 0, 0, 0, 0)
	f.Add([]byte("ééé\r\n\r\n"), 1, 1, 2, 4)
	f.Fuzz(func(t *testing.T, data []byte, offset, limit, runes, maxBytes int) {
		if len(data) > 1<<16 {
			return
		}
		w := fs.Window{Offset: offset % 50, Limit: limit % 50, MaxLineRunes: runes % 50, MaxBytes: maxBytes % 500}
		checkScan(t, data, w)
	})
}
