package spillwriter_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-harness/harness/internal/spillwriter"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/internal/longtest"
	"github.com/go-harness/harness/internal/spillwriter/noticetest"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/spill/spilltest"
	"github.com/go-harness/harness/tools"
)

var owner = tools.Owner{Session: "sess", Tool: "bash", Call: "call_1"}

func writeAll(t *testing.T, w io.Writer, text string, chunk int) {
	t.Helper()
	for len(text) > 0 {
		n := min(chunk, len(text))
		k, err := w.Write([]byte(text[:n]))
		require.NoError(t, err)
		require.Equal(t, n, k)
		text = text[n:]
	}
}

func TestWriterSmallOutputStaysWhole(t *testing.T) {
	leakcheck.Check(t)
	store := newMemory(t, spill.StoreConfig{})
	for _, size := range []int{0, 10, 2048} {
		w := newWriter(t, context.Background(), store, owner, 2048)
		text := strings.Repeat("s", size)
		writeAll(t, w, text, 100)
		require.NoError(t, w.Close())
		out := w.Output()
		assert.Equal(t, text, out.Text)
		assert.Equal(t, int64(size), out.Size)
		assert.False(t, out.Truncated)
		assert.Empty(t, out.Stored.Locator)
	}
	assert.Zero(t, savedCount(t, store), "outputs within the limit are never saved")
}

func TestWriterSpillsLongOutput(t *testing.T) {
	leakcheck.Check(t)
	for _, chunk := range []int{1, 7, 1000, 1 << 20} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			store := newMemory(t, spill.StoreConfig{})
			text := lines(2000)
			if chunk == 1 {
				text = lines(300)
			}
			w := newWriter(t, context.Background(), store, owner, 2048)
			writeAll(t, w, text, chunk)
			require.NoError(t, w.Close())
			out := w.Output()
			require.True(t, out.Truncated)
			require.NoError(t, out.Err)
			assert.Equal(t, int64(len(text)), out.Size)
			assert.Equal(t, int64(len(text)), out.Stored.Size)
			assert.LessOrEqual(t, len(out.Text), 2048)
			assert.Equal(t, text, string(spilltest.ReadAll(t, store, out.Stored.Locator)))

			n := noticetest.Parse(t, out.Text)
			assert.Equal(t, out.Stored.Locator, n.Locator)
			head, _, _ := strings.Cut(out.Text, "[...")
			tail := out.Text[strings.LastIndex(out.Text, "]\n")+2:]
			assert.NotEmpty(t, head)
			assert.NotEmpty(t, tail)
			assert.True(t, strings.HasPrefix(text, head))
			assert.True(t, strings.HasSuffix(text, tail))
			assert.Equal(t, len(text)-len(head)-len(tail), n.Omitted)
			assert.Equal(t, text[len(head):len(text)-len(tail)], noticetest.ReadLines(t, store, n.Locator, n.Offset, n.Limit),
				"the hint reads back exactly the omitted middle")
		})
	}
}

func TestWriterExactlyAtLimit(t *testing.T) {
	store := newMemory(t, spill.StoreConfig{})
	w := newWriter(t, context.Background(), store, owner, 2048)
	writeAll(t, w, strings.Repeat("e", 2048), 2048)
	require.NoError(t, w.Close())
	assert.False(t, w.Output().Truncated)
	w = newWriter(t, context.Background(), store, owner, 2048)
	writeAll(t, w, strings.Repeat("e", 2049), 2048)
	require.NoError(t, w.Close())
	assert.True(t, w.Output().Truncated)
	assert.Equal(t, 1, savedCount(t, store))
}

func TestWriterConcurrentWriters(t *testing.T) {
	leakcheck.Check(t)
	store := newDir(t, t.TempDir(), spill.StoreConfig{})
	w := newWriter(t, context.Background(), store, owner, 4096)
	var wg sync.WaitGroup
	for _, s := range []string{"out\n", "err\n"} {
		wg.Go(func() {
			for range 10_000 {
				_, _ = w.Write([]byte(s))
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	saved := string(spilltest.ReadAll(t, store, w.Output().Stored.Locator))
	assert.Len(t, saved, 80_000)
	assert.Equal(t, 10_000, strings.Count(saved, "out\n"))
	assert.Equal(t, 10_000, strings.Count(saved, "err\n"))
}

// brokenStore reads some of the output, then fails.
type brokenStore struct{ tools.OutputStore }

func (brokenStore) Save(ctx context.Context, o tools.Owner, r io.Reader) (tools.Stored, error) {
	_, _ = io.CopyN(io.Discard, r, 5000)
	return tools.Stored{}, errors.New("quota exceeded")
}

func TestWriterSaveFailureKeepsHeadAndTail(t *testing.T) {
	leakcheck.Check(t)
	text := lines(3000)
	w := newWriter(t, context.Background(), brokenStore{}, owner, 3000)
	writeAll(t, w, text, 512) // never fails
	err := w.Close()
	require.ErrorContains(t, err, "quota exceeded")
	out := w.Output()
	assert.True(t, out.Truncated)
	assert.Empty(t, out.Stored.Locator)
	assert.ErrorContains(t, out.Err, "quota exceeded")
	assert.LessOrEqual(t, len(out.Text), 3000)
	assert.Contains(t, out.Text, "could not be saved (quota exceeded)")
	assert.True(t, strings.HasPrefix(out.Text, "00001: "))
	assert.True(t, strings.HasSuffix(out.Text, "line 3000\n"))

	// Without a store, the head and tail are kept likewise.
	w = newWriter(t, context.Background(), nil, owner, 3000)
	writeAll(t, w, text, 512)
	require.NoError(t, w.Close())
	assert.Contains(t, w.Output().Text, "no output store is configured")
}

func TestWriterCancelled(t *testing.T) {
	leakcheck.Check(t)
	ctx, cancel := context.WithCancel(context.Background())
	store := newDir(t, t.TempDir(), spill.StoreConfig{})
	w := newWriter(t, ctx, store, owner, 1024)
	writeAll(t, w, lines(100), 100)
	cancel()
	writeAll(t, w, lines(10_000), 4096) // writes go on without failing
	err := w.Close()
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, w.Output().Text, "could not be saved")
	_, err = w.Write([]byte("late"))
	assert.ErrorIs(t, err, harness.CodeClosed)
	assert.ErrorIs(t, w.Close(), context.Canceled, "Close again reports the same")
}

func TestCallWriterUsesSessionStore(t *testing.T) {
	store := newMemory(t, spill.StoreConfig{})
	call := &tools.Call{ID: "c9", Name: "bash", Env: &tools.Env{SessionID: "s9", Output: store}}
	w := newWriter(t, context.Background(), call.Env.Output, tools.Owner{Session: call.Env.SessionID, Tool: call.Name, Call: call.ID}, 0)
	writeAll(t, w, lines(3000), 1<<16)
	require.NoError(t, w.Close())
	assert.LessOrEqual(t, len(w.Output().Text), spillwriter.DefaultThreshold)
	assert.Equal(t, lines(3000), string(spilltest.ReadAll(t, store, w.Output().Stored.Locator)))
	assert.Equal(t, 1, savedCount(t, store), "the output is saved once")
	assert.Contains(t, w.Output().Stored.Locator, "/bash-c9-")
}

// generator yields n bytes of numbered-looking text lines without
// allocating, from a fixed pattern.
type generator struct {
	pattern []byte
	off     int
	left    int64
}

func newGenerator(n int64) *generator {
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "%08d generated output line with some text to make it longer\n", i)
	}
	return &generator{pattern: []byte(b.String()), left: n}
}

func (g *generator) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], g.pattern[g.off:])
		n += c
		g.off = (g.off + c) % len(g.pattern)
	}
	g.left -= int64(n)
	return n, nil
}

// heapPeak samples live heap bytes until stop is closed and returns the
// peak seen.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// TestWriterGigabyteBoundedMemory streams 1 GiB through a Writer into a
// directory store and checks that memory stays bounded: the heap never
// grows by more than a few MiB and the whole run allocates far less than
// the output.
func TestWriterGigabyteBoundedMemory(t *testing.T) {
	leakcheck.Check(t)
	// 128 MiB by default, eight times the allocation bound; 1 GiB in
	// the long runs.
	size := longtest.Pick[int64](128<<20, 1<<30)
	store := newDir(t, t.TempDir(), spill.StoreConfig{})
	gen := newGenerator(size)
	buf := make([]byte, 64<<10)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	peakc := heapPeak(stop)

	w := newWriter(t, context.Background(), store, owner, spillwriter.DefaultThreshold)
	n, err := io.CopyBuffer(w, gen, buf)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	close(stop)
	peak := <-peakc
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	require.Equal(t, size, n)
	out := w.Output()
	require.NoError(t, out.Err)
	assert.Equal(t, size, out.Stored.Size)
	assert.LessOrEqual(t, len(out.Text), spillwriter.DefaultThreshold)
	rc, err := store.Open(context.Background(), out.Stored.Locator)
	require.NoError(t, err)
	saved, err := io.Copy(io.Discard, rc)
	rc.Close()
	require.NoError(t, err)
	assert.Equal(t, size, saved)

	allocated := after.TotalAlloc - before.TotalAlloc
	growth := int64(peak) - int64(before.HeapAlloc)
	t.Logf("%s streamed: %.1f MiB allocated in all, heap peak %.1f MiB above the start", units.Bytes(size), float64(allocated)/(1<<20), float64(growth)/(1<<20))
	assert.Less(t, allocated, uint64(16<<20), "allocation does not grow with the output")
	assert.Less(t, growth, int64(32<<20), "the heap stays bounded")
}

func TestWriterPastTheBudget(t *testing.T) {
	leakcheck.Check(t)
	store := newMemory(t, spill.StoreConfig{SessionBudget: 5000})
	text := lines(3000)
	w := newWriter(t, context.Background(), store, owner, 3000)
	writeAll(t, w, text, 512) // never fails
	err := w.Close()
	require.ErrorIs(t, err, harness.CodeSpillBudget)
	out := w.Output()
	assert.True(t, out.Truncated)
	assert.Empty(t, out.Stored.Locator)
	assert.LessOrEqual(t, len(out.Text), 3000)
	assert.Contains(t, out.Text, "could not be saved (spill: the output is larger than the session's whole spill budget of 4.9 KiB)")
	assert.True(t, strings.HasPrefix(out.Text, "00001: "))
	assert.True(t, strings.HasSuffix(out.Text, "line 3000\n"))
	assert.Zero(t, savedCount(t, store), "nothing of it is kept")
}

func TestWriterRefusesBadConfig(t *testing.T) {
	for _, limit := range []int{-1, 1, spillwriter.MinThreshold - 1} {
		w, err := spillwriter.NewWriter(context.Background(), nil, owner, limit)
		assert.Nil(t, w)
		require.ErrorIs(t, err, harness.CodeInvalidOption, "limit %d", limit)
	}
	w, err := spillwriter.NewWriter(context.Background(), nil, owner, spillwriter.MinThreshold, spillwriter.WithMaxSave(0))
	assert.Nil(t, w)
	require.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.Contains(t, err.Error(), "WithMaxSave(0)")
}

func TestWriterMaxSaveCutsTheSave(t *testing.T) {
	leakcheck.Check(t)
	store := newMemory(t, spill.StoreConfig{})
	text := lines(3000)
	w := newWriter(t, context.Background(), store, owner, 2048, spillwriter.WithMaxSave(5000))
	writeAll(t, w, text, 333)
	require.NoError(t, w.Close())
	out := w.Output()
	assert.True(t, out.Truncated)
	assert.True(t, out.Cut, "the save stopped at the cap")
	assert.Equal(t, int64(5000), out.Stored.Size)
	assert.Equal(t, text[:5000], string(spilltest.ReadAll(t, store, out.Stored.Locator)), "the first 5000 bytes are saved")
	assert.Equal(t, int64(len(text)), out.Size, "every byte is still counted")
	assert.Equal(t, text[:2048], out.Head)
	assert.Equal(t, text[len(text)-2048:], out.Tail)
	assert.Equal(t, int64(3000), out.Newlines)
}

func TestWriterSaveKeepsAShortStream(t *testing.T) {
	leakcheck.Check(t)
	store := newMemory(t, spill.StoreConfig{})
	w := newWriter(t, context.Background(), store, tools.Owner{Session: "s", Tool: "bash", Call: "first"}, 4096)
	_, err := io.WriteString(w, "short\n")
	require.NoError(t, err)
	w.SetOwner(tools.Owner{Session: "s", Tool: "bash", Call: "second"})
	w.Save()
	_, err = io.WriteString(w, "and a last line")
	require.NoError(t, err)
	w.Save() // a second Save does nothing
	require.NoError(t, w.Close())
	out := w.Output()
	assert.False(t, out.Truncated, "the stream fit: Text is all of it")
	assert.Equal(t, "short\nand a last line", out.Text)
	assert.Equal(t, int64(1), out.Newlines)
	require.NotEmpty(t, out.Stored.Locator, "Save saved it anyway")
	assert.Contains(t, out.Stored.Locator, "/bash-second-", "the owner set before the save started")
	assert.Equal(t, out.Text, string(spilltest.ReadAll(t, store, out.Stored.Locator)))

	// Without a store, Save does nothing and nothing fails.
	w = newWriter(t, context.Background(), nil, owner, 4096)
	_, _ = io.WriteString(w, "x")
	w.Save()
	require.NoError(t, w.Close())
	assert.Empty(t, w.Output().Stored.Locator)
}

// FuzzWriter writes a stream in chunks of the fuzzed sizes through a
// Writer with a fuzzed limit and save cap, and checks what it kept: the
// head and the tail are the stream's ends, the store holds the stream (or
// its first cap bytes), and the Text is the whole stream or a preview
// within the limit.
func FuzzWriter(f *testing.F) {
	f.Add([]byte("line 1\nline 2\n"), uint16(0), uint32(0), uint8(7))
	f.Add([]byte(strings.Repeat("x\n", 3000)), uint16(10), uint32(100), uint8(1))
	f.Add([]byte(strings.Repeat("é𝄞\n", 900)), uint16(900), uint32(5000), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, extra uint16, capSave uint32, chunk uint8) {
		if len(data) > 1<<16 {
			return
		}
		limit := spillwriter.MinThreshold + int(extra)
		var opts []spillwriter.WriterOption
		if capSave > 0 {
			opts = append(opts, spillwriter.WithMaxSave(int64(capSave)))
		}
		store := newMemory(t, spill.StoreConfig{})
		w := newWriter(t, context.Background(), store, owner, limit, opts...)
		step := int(chunk) + 1
		for rest := data; len(rest) > 0; {
			n := min(step, len(rest))
			k, err := w.Write(rest[:n])
			require.NoError(t, err)
			require.Equal(t, n, k)
			rest = rest[n:]
		}
		require.NoError(t, w.Close())
		out := w.Output()
		require.Equal(t, int64(len(data)), out.Size)
		require.Equal(t, int64(strings.Count(string(data), "\n")), out.Newlines)
		require.Equal(t, string(data[:min(len(data), limit)]), out.Head)
		// The tail is the stream's last bytes, at most limit of them,
		// never starting inside a UTF-8 sequence.
		require.True(t, strings.HasSuffix(string(data), out.Tail))
		require.LessOrEqual(t, len(out.Tail), limit)
		require.GreaterOrEqual(t, len(out.Tail), min(len(data), limit)-3)
		if len(data) <= limit {
			require.False(t, out.Truncated)
			require.Equal(t, string(data), out.Text)
			require.Empty(t, out.Stored.Locator, "a stream within the limit is not saved unless asked")
			return
		}
		require.True(t, out.Truncated)
		require.LessOrEqual(t, len(out.Text), limit)
		require.NotEmpty(t, out.Stored.Locator)
		want := data
		if capSave > 0 && int64(len(data)) > int64(capSave) {
			want = data[:capSave]
			require.True(t, out.Cut)
		} else {
			require.False(t, out.Cut)
		}
		require.Equal(t, string(want), string(spilltest.ReadAll(t, store, out.Stored.Locator)))
	})
}

// savedCount empties store and returns how many outputs it held: each
// was saved before an hour from now.
func savedCount(t testing.TB, store spill.Store) int {
	t.Helper()
	n, err := store.Expire(context.Background(), time.Now().Add(time.Hour))
	require.NoError(t, err)
	return n
}

// newMemory returns a spill.NewMemory store, failing the test on an
// invalid option.
func newMemory(t testing.TB, cfg spill.StoreConfig) spill.Store {
	t.Helper()
	m, err := spill.NewMemory(cfg)
	require.NoError(t, err)
	return m
}

// newDir returns a spill.NewDir store, failing the test on an invalid
// option.
func newDir(t testing.TB, dir string, cfg spill.StoreConfig) spill.Store {
	t.Helper()
	d, err := spill.NewDir(dir, cfg)
	require.NoError(t, err)
	return d
}

// newWriter returns a Writer, failing the test on an invalid limit or
// option.
func newWriter(t testing.TB, ctx context.Context, store tools.OutputStore, o tools.Owner, limit int, opts ...spillwriter.WriterOption) *spillwriter.Writer {
	t.Helper()
	w, err := spillwriter.NewWriter(ctx, store, o, limit, opts...)
	require.NoError(t, err)
	return w
}

// lines makes text of n numbered lines.
func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%05d: output of the command, line %d\n", i, i)
	}
	return b.String()
}

// A budget shared by writers cuts each save where it runs out, as the
// save cap does: the first writer saves what the budget allows, the next
// one nothing more.
func TestWriterBudgetIsShared(t *testing.T) {
	leakcheck.Check(t)
	store := newMemory(t, spill.StoreConfig{})
	left := int64(7000)
	var mu sync.Mutex
	take := func(n int64) int64 {
		mu.Lock()
		defer mu.Unlock()
		n = min(n, left)
		left -= n
		return n
	}
	text := lines(3000)
	w1 := newWriter(t, context.Background(), store, owner, 2048, spillwriter.WithBudget(take))
	writeAll(t, w1, text, 333)
	require.NoError(t, w1.Close())
	out := w1.Output()
	assert.True(t, out.Cut, "the save stopped where the budget ran out")
	assert.Equal(t, int64(7000), out.Stored.Size)
	assert.Equal(t, text[:7000], string(spilltest.ReadAll(t, store, out.Stored.Locator)))
	assert.Equal(t, int64(len(text)), out.Size, "every byte is still counted")

	w2 := newWriter(t, context.Background(), store, owner, 2048, spillwriter.WithBudget(take), spillwriter.WithMaxSave(100000))
	writeAll(t, w2, text, 333)
	require.NoError(t, w2.Close())
	out = w2.Output()
	assert.True(t, out.Cut)
	assert.Equal(t, int64(0), out.Stored.Size, "nothing was left of the budget")
	assert.Equal(t, text[len(text)-2048:], out.Tail, "the preview is whole")
}
