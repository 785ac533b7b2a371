package shellkit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

func TestCaptureViewAndSpill(t *testing.T) {
	store := shelltest.NewDirStore(t)
	c := shellkit.NewCapture(context.Background(), 1024, store, tools.Owner{Session: "s", Tool: "bash", Call: "c1"}, 1<<20)
	var all strings.Builder
	for i := range 500 {
		line := fmt.Sprintf("line %d\n", i)
		all.WriteString(line)
		_, _ = c.Write([]byte(line))
	}
	s, info := c.Take(1024)
	assert.Equal(t, int64(all.Len()), s.Total)
	assert.Equal(t, int64(500), s.Lines)
	assert.True(t, strings.HasPrefix(s.Head, "line 0\nline 1\n"))
	assert.True(t, strings.HasSuffix(s.Head, "\n"), "the head ends at a line end")
	assert.True(t, strings.HasPrefix(s.Tail, "line "), "the tail starts at a line start")
	assert.True(t, strings.HasSuffix(s.Tail, "line 499\n"))
	assert.Equal(t, s.Total, int64(len(s.Head)+len(s.Tail))+s.Omitted)
	assert.LessOrEqual(t, len(s.Head)+len(s.Tail), 1024)
	require.NotNil(t, info.Stored)
	assert.Equal(t, all.String(), store.Read(t, info.Stored.Locator))
	assert.Equal(t, "c1", store.Owners()[0].Call)
	_, _ = c.Write([]byte("ignored"))
	assert.Equal(t, info, c.Finish(true), "finish is idempotent")
	assert.Equal(t, int64(all.Len()), c.Total(), "writes after the end are dropped")

	small := shellkit.NewCapture(context.Background(), 1024, store, tools.Owner{}, 1<<20)
	_, _ = small.Write([]byte("short"))
	s, info = small.Take(1024)
	assert.Equal(t, shellkit.Shown{Head: "short", Total: 5}, s)
	assert.Nil(t, info.Stored, "nothing is saved when nothing is cut")
	assert.Len(t, store.Owners(), 1)

	// A stream that fits its limit but not the view's budget is saved
	// whole, so all of it can be read.
	mid := shellkit.NewCapture(context.Background(), 4096, store, tools.Owner{Call: "c2"}, 1<<20)
	_, _ = mid.Write([]byte(all.String()[:3000]))
	s, info = mid.Take(1500)
	assert.Positive(t, s.Omitted)
	require.NotNil(t, info.Stored)
	assert.Equal(t, all.String()[:3000], store.Read(t, info.Stored.Locator))
}

func TestCaptureStoreFailure(t *testing.T) {
	c := shellkit.NewCapture(context.Background(), 1024, failingStore{}, tools.Owner{}, 1<<20)
	_, _ = c.Write(bytes.Repeat([]byte("x\n"), 1000))
	s, info := c.Take(1024)
	require.Error(t, info.Err)
	assert.Nil(t, info.Stored)
	var b strings.Builder
	shellkit.WriteStream(&b, s, info, "stdout")
	assert.Contains(t, b.String(), "could not be saved (disk full)")
	assert.Contains(t, b.String(), "redirected to a file")
}

type failingStore struct{}

func (failingStore) Save(ctx context.Context, o tools.Owner, r io.Reader) (tools.Stored, error) {
	_, _ = r.Read(make([]byte, 10))
	return tools.Stored{}, errors.New("disk full")
}

func (failingStore) Open(ctx context.Context, loc string) (io.ReadCloser, error) {
	return nil, errors.New("nothing")
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		budget int
		a, b   int64
		x, y   int
	}{
		{100, 10, 10, 10, 10},
		{100, 500, 10, 90, 10},
		{100, 10, 500, 10, 90},
		{100, 500, 500, 50, 50},
		{100, 0, 0, 0, 0},
	} {
		x, y := shellkit.Split(tc.budget, tc.a, tc.b)
		assert.Equal(t, []int{tc.x, tc.y}, []int{x, y}, "%+v", tc)
	}
}
