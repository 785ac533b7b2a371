package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/s3test"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/spill/s3"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/toolstest"
)

// TestReadWindowSameAsScan checks that a window read with the line index
// is the window fs.ScanText finds in the whole output, for outputs laid
// out every way and windows around the index's steps and the end.
func TestReadWindowSameAsScan(t *testing.T) {
	s := newStore(t, s3.Config{})
	numbered := func(n int, sep string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d%s", i, sep)
		}
		return b.String()
	}
	outputs := map[string]string{
		"empty":      "",
		"one":        "only line",
		"lf":         numbered(2000, "\n"),
		"no_last_lf": strings.TrimSuffix(numbered(1537, "\n"), "\n"),
		"crlf":       numbered(1100, "\r\n"),
		"bom":        fsimpl.BOM + numbered(1200, "\n"),
		"blank":      strings.Repeat("\n", 1500),
		"long":       strings.Repeat(strings.Repeat("x", 5000)+"\n", 700),
		"unicode":    strings.Repeat("ünïcode ✓ 日本語\n", 1300),
		"nul_late":   numbered(600, "\n") + strings.Repeat("y", 9000) + "\x00\n" + numbered(600, "\n"),
		"nul_early":  "a\x00b\n" + numbered(1000, "\n"),
	}
	windows := []fs.Window{
		{}, {Offset: 1, Limit: 10}, {Offset: 511, Limit: 3}, {Offset: 512, Limit: 1}, {Offset: 513, Limit: 2},
		{Offset: 1024, Limit: 600}, {Offset: 1025}, {Offset: 1100, Limit: 1}, {Offset: 1199, Limit: 5},
		{Offset: 1536, Limit: 2}, {Offset: 1537, Limit: 1}, {Offset: 1538, Limit: 1}, {Offset: 2000}, {Offset: 2001},
		{Offset: 600, Limit: 100, MaxBytes: 300}, {Offset: 650, Limit: 10, MaxLineRunes: 7}, {Offset: 99999},
	}
	for name, data := range outputs {
		st, err := s.Save(context.Background(), tools.Owner{Session: "s", Tool: "bash", Call: name}, strings.NewReader(data))
		require.NoError(t, err)
		for _, w := range windows {
			want, wantErr := fs.ScanText(context.Background(), strings.NewReader(data), w)
			got, err := s.ReadWindow(context.Background(), st.Locator, w)
			if wantErr != nil {
				require.Error(t, err, "%s %+v", name, w)
				assert.Equal(t, harness.CodeOf(wantErr), harness.CodeOf(err), "%s %+v: %v", name, w, err)
				continue
			}
			require.NoError(t, err, "%s %+v", name, w)
			assert.Equal(t, want, got, "%s %+v", name, w)
		}
	}
	_, err := s.ReadWindow(context.Background(), tools.OutputScheme+"nope", fs.Window{})
	assert.ErrorIs(t, err, harness.CodeNotFound)
}

// countingTransport counts the bytes of the responses it carries.
type countingTransport struct {
	n atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// countedStore is a store on a fresh bucket whose client counts the
// bytes of the responses it reads, and a saved output of 200,000
// numbered lines.
func countedStore(t *testing.T) (spill.Store, *countingTransport, tools.Stored, int) {
	t.Helper()
	base := s3test.Client(t)
	bucket := s3test.Bucket(t, base)
	ct := &countingTransport{}
	c, err := minio.New(base.EndpointURL().Host, &minio.Options{
		Creds:     credentials.NewStaticV4(envOr("HARNESS_S3_ACCESS_KEY"), envOr("HARNESS_S3_SECRET_KEY"), ""),
		Transport: ct,
	})
	require.NoError(t, err)
	s, err := s3.New(context.Background(), c, bucket, s3.Config{})
	require.NoError(t, err)
	var data bytes.Buffer
	for i := 1; i <= 200_000; i++ {
		fmt.Fprintf(&data, "log line %06d: something happened\n", i)
	}
	st, err := s.Save(context.Background(), tools.Owner{Session: "s", Tool: "bash", Call: "c"}, bytes.NewReader(data.Bytes()))
	require.NoError(t, err)
	ct.n.Store(0)
	return s, ct, st, data.Len()
}

// TestReadWindowFetchesOnlyTheWindow reads 100 lines from the end of an
// output of 200,000 and counts the bytes that came over the wire.
func TestReadWindowFetchesOnlyTheWindow(t *testing.T) {
	st3, ct, st, size := countedStore(t)
	text, err := asWindowed(t, st3).ReadWindow(context.Background(), st.Locator, fs.Window{Offset: 150_000, Limit: 100})
	require.NoError(t, err)
	require.Len(t, text.Lines, 100)
	assert.Equal(t, "log line 150000: something happened", text.Lines[0].Text)
	assert.Equal(t, 200_000, text.TotalLines)
	fetched := ct.n.Load()
	t.Logf("a window of 100 lines fetched %d bytes of a %d-byte output", fetched, size)
	assert.Less(t, fetched, int64(200<<10), "the window, its index and the output's first bytes, not the output")
}

// TestReadToolUsesTheWindow runs the read tool on an output in the store
// New returns: the tool finds ReadWindow on it by type assertion, so
// reading 100 lines near the end fetches about the window, not the
// output.
func TestReadToolUsesTheWindow(t *testing.T) {
	s, ct, st, size := countedStore(t)
	env := toolstest.NewEnv()
	defer env.Close()
	env.Env.Output = s
	res, err := env.Call(context.Background(), files.Read(files.Config{}), map[string]any{"file_path": st.Locator, "offset": 150_000, "limit": 3})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "150000: log line 150000: something happened\n150001: log line 150001")
	assert.Contains(t, res.Text(), "of 200000")
	assert.Less(t, ct.n.Load(), int64(200<<10), "the read tool fetched the window, not the %d-byte output", size)
}

func envOr(k string) string { return os.Getenv(k) }
