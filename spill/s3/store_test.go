package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/s3test"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/spill/s3"
	"github.com/go-harness/harness/spill/spilltest"
	"github.com/go-harness/harness/tools"
)

// windowed is what the read tool (tools/files) asserts on to read a
// window of a saved output without fetching the rest.
type windowed interface {
	spill.Store
	ReadWindow(ctx context.Context, locator string, w fs.Window) (*fs.Text, error)
}

func newStore(t testing.TB, cfg s3.Config) windowed {
	t.Helper()
	c := s3test.Client(t)
	s, err := s3.New(context.Background(), c, s3test.Bucket(t, c), cfg)
	require.NoError(t, err)
	return asWindowed(t, s)
}

// asWindowed returns s as the read tool finds it.
func asWindowed(t testing.TB, s spill.Store) windowed {
	t.Helper()
	w, ok := s.(windowed)
	require.True(t, ok, "the store reads windows itself")
	return w
}

func TestConformance(t *testing.T) {
	s3test.Client(t)
	spilltest.TestStore(t, func(t *testing.T) spill.Store { return newStore(t, s3.Config{}) })
}

func TestOptions(t *testing.T) {
	c := s3test.Client(t)
	bucket := s3test.Bucket(t, c)
	_, err := s3.New(context.Background(), nil, bucket, s3.Config{})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	for _, p := range []string{"no-slash", "/abs/", "a//b/", "../", "a/./", "a/../"} {
		_, err := s3.New(context.Background(), c, bucket, s3.Config{Prefix: p})
		assert.ErrorIs(t, err, harness.CodeInvalidOption, "prefix %q", p)
	}
	_, err = s3.New(context.Background(), c, "no-such-bucket-here", s3.Config{})
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.ErrorContains(t, err, "create it first")

	// Two prefixes in one bucket are two stores.
	a, err := s3.New(context.Background(), c, bucket, s3.Config{Prefix: "a/"})
	require.NoError(t, err)
	b, err := s3.New(context.Background(), c, bucket, s3.Config{Prefix: "b/x/"})
	require.NoError(t, err)
	st, err := a.Save(context.Background(), tools.Owner{Session: "s", Tool: "bash", Call: "1"}, strings.NewReader("in a"))
	require.NoError(t, err)
	_, err = b.Open(context.Background(), st.Locator)
	assert.ErrorIs(t, err, harness.CodeNotFound, "another prefix does not see the output")
	assert.Equal(t, "in a", string(spilltest.ReadAll(t, a, st.Locator)))
	n, err := b.Expire(context.Background(), farFuture)
	require.NoError(t, err)
	assert.Zero(t, n, "b expires nothing of a")
}

// TestRangedReads checks that a saved output reads back in ranges: the
// reader seeks and reads at offsets without fetching the whole object.
func TestRangedReads(t *testing.T) {
	s := newStore(t, s3.Config{})
	var data bytes.Buffer
	for i := range 200_000 {
		fmt.Fprintf(&data, "line %d\n", i)
	}
	st, err := s.Save(context.Background(), tools.Owner{Session: "s", Tool: "bash", Call: "c"}, bytes.NewReader(data.Bytes()))
	require.NoError(t, err)
	require.Equal(t, int64(data.Len()), st.Size, "a multipart upload of %d bytes", data.Len())
	rc, err := s.Open(context.Background(), st.Locator)
	require.NoError(t, err)
	defer rc.Close()
	ra, ok := rc.(io.ReaderAt)
	require.True(t, ok, "the reader is an io.ReaderAt")
	buf := make([]byte, 12)
	off := int64(bytes.Index(data.Bytes(), []byte("line 150000\n")))
	_, err = ra.ReadAt(buf, off)
	require.NoError(t, err)
	assert.Equal(t, "line 150000\n", string(buf))
	sk, ok := rc.(io.Seeker)
	require.True(t, ok, "and an io.Seeker")
	_, err = sk.Seek(-7, io.SeekEnd)
	require.NoError(t, err)
	tail, err := io.ReadAll(rc)
	require.NoError(t, err)
	assert.Equal(t, "199999\n", string(tail))
}

var farFuture = time.Now().Add(100 * 365 * 24 * time.Hour)
