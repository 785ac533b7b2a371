package session

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

// sizedReader is a file that says it is smaller than it is: it grew
// between the Stat and the read.
type sizedReader struct {
	*bytes.Reader
	size int64
}

func (r sizedReader) Stat() (fs.FileInfo, error) { return sizedInfo(r.size), nil }

type sizedInfo int64

func (s sizedInfo) Name() string       { return "log" }
func (s sizedInfo) Size() int64        { return int64(s) }
func (s sizedInfo) Mode() fs.FileMode  { return 0o600 }
func (s sizedInfo) ModTime() time.Time { return time.Time{} }
func (s sizedInfo) IsDir() bool        { return false }
func (s sizedInfo) Sys() any           { return nil }

// A short log is read with a buffer its size, not the one a long log
// needs (issue 38: resuming thousands of sessions); lines longer than the
// buffer, as in a file that grew meanwhile, are read whole all the same.
func TestReadBufferFitsTheLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []struct {
		size int64
		want int
	}{{0, minReadBuffer}, {100, minReadBuffer}, {10_000, 10_001}, {maxReadBuffer, maxReadBuffer}, {1 << 30, maxReadBuffer}} {
		assert.Equal(t, c.want, readBufferSize(sizedReader{bytes.NewReader(nil), c.size}), "a file of %d bytes", c.size)
	}
	assert.Equal(t, maxReadBuffer, readBufferSize(strings.NewReader("x")), "not a file")

	store := newJSONL(dir, StoreConfig{})
	log, err := store.Create(ctx, Header{ID: "s", Cwd: "/w"})
	require.NoError(t, err)
	long := strings.Repeat("word ", 20_000) // 100 KB, in one line
	for _, text := range []string{"short", long, "after"} {
		_, err = log.Append(ctx, &UserMessage{Content: []harness.Block{harness.TextBlock(text)}})
		require.NoError(t, err)
	}
	require.NoError(t, log.Close())
	b, err := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	require.NoError(t, err)
	ld, err := readTranscript(ctx, sizedReader{bytes.NewReader(b), 200}, "s", store.cfg.maxLine)
	require.NoError(t, err)
	require.Len(t, ld.t.Events, 3)
	assert.Equal(t, long, ld.t.Events[1].Data.(*UserMessage).Content[0].Text)
	assert.Equal(t, "after", ld.t.Events[2].Data.(*UserMessage).Content[0].Text)

	// Loading a short log allocates about its size, not maxReadBuffer.
	small, err := store.Create(ctx, Header{ID: "small", Cwd: "/w"})
	require.NoError(t, err)
	_, err = small.Append(ctx, &UserMessage{Content: []harness.Block{harness.TextBlock("hi")}})
	require.NoError(t, err)
	require.NoError(t, small.Close())
	const loads = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range loads {
		_, err := store.Load(ctx, "small")
		require.NoError(t, err)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, (after.TotalAlloc-before.TotalAlloc)/loads, uint64(maxReadBuffer/4), "bytes allocated by one Load of a short log")
}
