package images

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools"
)

// The memory tests run each decode in a child process (this test binary,
// re-executed to run TestHelperDecode alone) and take the child's peak
// resident set size, so what is measured is the whole cost of one decode,
// or of eight concurrent read_image calls, and nothing else. The child
// reports its own high-water mark (VmHWM); the rusage of the wait
// (ru_maxrss) is the fallback where there is no /proc, and it overstates:
// os/exec starts the child with vfork, so the child's ru_maxrss begins at
// the parent's own peak.

const (
	helperEnv = "HARNESS_IMAGES_DECODE_HELPER"
	// The targets: one image, and eight concurrent calls.
	singleTarget     = 160 << 20
	concurrentTarget = 400 << 20
)

// TestHelperDecode is the child's side; without the variable it does
// nothing. The variable is "mode path": mode "normalize" normalizes the
// file once, "old" decodes it the way Normalize did before (image/png,
// then area averaging and encoding), "tool" runs eight read_image calls
// on it at once. It prints one RESULT line.
func TestHelperDecode(t *testing.T) {
	arg := os.Getenv(helperEnv)
	if arg == "" {
		t.Skip("run by the memory tests in a child process")
	}
	defer func() { fmt.Printf("PEAK %d\n", peakRSS()) }()
	mode, p, _ := strings.Cut(arg, " ")
	data, err := os.ReadFile(p)
	if err != nil {
		fmt.Printf("RESULT fail %v\n", err)
		return
	}
	name := filepath.Base(p)
	ctx := context.Background()
	switch mode {
	case "normalize":
		n, err := Normalize(ctx, name, data, Limits{})
		data = nil
		report(n, err)
	case "old":
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			report(nil, err)
			return
		}
		nw, nh := fitLongEdge(img.Bounds().Dx(), img.Bounds().Dy(), defaultLongEdge)
		out, err := areaScale(ctx, img, nw, nh)
		if err == nil {
			_, _, err = encode(out, true, defaultMaxBytes)
		}
		report(&Normalized{Width: nw, Height: nh, MediaType: typePNG}, err)
	case "tool":
		mem := fstest.NewMemFS("/ws")
		if err := mem.SetFile("/ws/"+name, data, 0o644); err != nil {
			fmt.Printf("RESULT fail %v\n", err)
			return
		}
		data = nil
		state := &tools.State{}
		defer state.Close()
		env := &tools.Env{Cwd: "/ws", FS: mem, ModelInput: []harness.Modality{harness.ModalityImage}, State: state,
			Attachments: attachments.NewMemory(), Logger: slog.New(slog.DiscardHandler)}
		tool := ReadImage(Config{})
		args, _ := json.Marshal(map[string]string{"file_path": name})
		var wg sync.WaitGroup
		results := make([]string, 8)
		for i := range results {
			wg.Go(func() {
				res, err := tool.Execute(ctx, &tools.Call{ID: fmt.Sprint(i), Name: "read_image", Arguments: string(args), Env: env})
				switch {
				case err != nil:
					results[i] = "err " + string(harness.CodeOf(err))
				case res.IsError:
					results[i] = "err tool"
				default:
					results[i] = fmt.Sprintf("ok %dx%d", res.Content[1].Image.Width, res.Content[1].Image.Height)
				}
			})
		}
		wg.Wait()
		fmt.Printf("RESULT %s\n", strings.Join(results, ","))
	default:
		fmt.Printf("RESULT fail mode %q\n", mode)
	}
}

// peakRSS returns this process's peak resident set size in bytes from
// /proc/self/status (VmHWM, the high-water mark of its own address space),
// or -1 where there is no such file. Unlike ru_maxrss it does not include
// what the process inherited before exec: Go starts a child with vfork,
// so a child's ru_maxrss starts at the parent's own peak.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kib); err == nil {
				return kib << 10
			}
		}
	}
	return -1
}

func report(n *Normalized, err error) {
	var e *harness.Error
	switch {
	case errors.As(err, &e):
		fmt.Printf("RESULT err %s\n", e.Code)
	case err != nil:
		fmt.Printf("RESULT fail %v\n", err)
	default:
		fmt.Printf("RESULT ok %dx%d %s\n", n.Width, n.Height, n.MediaType)
	}
}

// decodeInChild runs the helper on a file and returns the child's peak
// RSS in bytes and its RESULT line.
func decodeInChild(t *testing.T, mode, path string) (int64, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDecode$", "-test.count=1")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, helperEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, helperEnv+"="+mode+" "+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, ok, "no rusage on this system")
	result, peak := "", int64(-1)
	for _, line := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(line, "RESULT "); ok {
			result = r
		}
		if p, ok := strings.CutPrefix(line, "PEAK "); ok {
			fmt.Sscan(p, &peak)
		}
	}
	require.NotEmpty(t, result, "the child printed no result: %s", out)
	t.Logf("child: VmHWM %.1f MiB, ru_maxrss %.1f MiB", float64(peak)/(1<<20), float64(ru.Maxrss<<10)/(1<<20))
	if peak < 0 {
		// No /proc: ru_maxrss (KiB on Linux), which also counts the
		// parent's peak, so it can only overstate.
		peak = ru.Maxrss << 10
	}
	return peak, result
}

// bomb is a large image, written to a file on demand.
type bomb struct {
	name   string // the file name, whose extension says the type
	write  func(t testing.TB, path string)
	accept bool // accepted (else refused with harness.CodeTooLarge)
	long   bool // only with HARNESS_LONG_TESTS=1
}

func pngBomb(name string, depth, colour byte, interlaced, long bool) bomb {
	return bomb{name: name, long: long, accept: true, write: func(t testing.TB, p string) {
		writeBombPNG(t, p, capW, capH, depth, colour, interlaced)
	}}
}

func bombs() []bomb {
	return []bomb{
		pngBomb("rgba16.png", 16, 6, false, false),
		pngBomb("rgba16-interlaced.png", 16, 6, true, false),
		pngBomb("rgba8.png", 8, 6, false, true),
		pngBomb("rgba8-interlaced.png", 8, 6, true, true),
		pngBomb("grey8.png", 8, 0, false, true),
		pngBomb("grey16-interlaced.png", 16, 0, true, true),
		pngBomb("palette8.png", 8, 3, false, true),
		pngBomb("palette4-interlaced.png", 4, 3, true, true),
		{name: "photo420.jpg", accept: true, long: true, write: func(t testing.TB, p string) { writeBombJPEG(t, p, capW, capH) }},
		{name: "photo420-padded.jpg", accept: true, long: true, write: func(t testing.TB, p string) {
			// The same with comments making the file nearly as large as
			// the byte limit: the file's bytes count too.
			writeBombJPEG(t, p, capW, capH)
			padJPEG(t, p, defaultMaxBytes-(64<<10))
		}},
		{name: "photo444.jpg", long: true, write: func(t testing.TB, p string) {
			writeBombJPEG(t, p, capW, capH)
			patchFile(t, p, func(b []byte) { // luma sampled like chroma: 4:4:4
				i := bytes.Index(b, []byte{0xff, 0xc0})
				b[i+11] = 0x11
			})
		}},
		{name: "progressive.jpg", long: true, write: func(t testing.TB, p string) {
			writeBombJPEG(t, p, capW, capH)
			patchFile(t, p, func(b []byte) { b[bytes.Index(b, []byte{0xff, 0xc0})+1] = 0xc2 })
		}},
		{name: "frame.gif", accept: true, long: true, write: func(t testing.TB, p string) { writeBombGIF(t, p, capW, capH, false) }},
		{name: "interlaced.gif", long: true, write: func(t testing.TB, p string) { writeBombGIF(t, p, capW, capH, true) }},
		{name: "lossy.webp", accept: true, long: true, write: func(t testing.TB, p string) { copyFixture(t, "bomb_lossy.webp", p) }},
		{name: "lossless.webp", long: true, write: func(t testing.TB, p string) {
			require.NoError(t, os.WriteFile(p, bombWebPLossless(capW, capH, color.NRGBA{10, 200, 30, 255}), 0o644))
		}},
	}
}

// estimate returns memoryNeed for a file under the default limits.
func estimate(t testing.TB, p string) int64 {
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	mt, _ := mediaTypeOf(p)
	cfg, err := decodeConfig(mt, data)
	require.NoError(t, err)
	need, _ := memoryNeed(mt, data, cfg.Width, cfg.Height, defaultLimits())
	return need
}

// padJPEG inserts comment segments after a JPEG's SOI until the file is
// about size bytes.
func padJPEG(t testing.TB, p string, size int) {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var pad []byte
	for len(b)+len(pad) < size {
		n := min(65533, size-len(b)-len(pad))
		seg := make([]byte, 4+n)
		seg[0], seg[1] = 0xff, 0xfe
		binary.BigEndian.PutUint16(seg[2:], uint16(n+2))
		for i := range n {
			seg[4+i] = byte('a' + i%26)
		}
		pad = append(pad, seg...)
	}
	out := append(append(append([]byte(nil), b[:2]...), pad...), b[2:]...)
	require.NoError(t, os.WriteFile(p, out, 0o644))
}

func patchFile(t testing.TB, p string, f func([]byte)) {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	f(b)
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

func copyFixture(t testing.TB, name, p string) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, fixture(t, name), 0o644))
}

func TestDecodeMemoryBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies memory use")
	}
	dir := t.TempDir()
	for _, b := range bombs() {
		t.Run(b.name, func(t *testing.T) {
			if b.long && !longTests() {
				t.Skip("set HARNESS_LONG_TESTS=1 for the whole matrix")
			}
			p := filepath.Join(dir, b.name)
			b.write(t, p)
			rss, result := decodeInChild(t, "normalize", p)
			t.Logf("%s: peak RSS %.1f MiB (estimated decode need %.1f MiB): %s", b.name, float64(rss)/(1<<20), float64(estimate(t, p))/(1<<20), result)
			if b.accept {
				assert.True(t, strings.HasPrefix(result, "ok 2048x1953"), result)
			} else {
				assert.Equal(t, "err "+string(harness.CodeTooLarge), result)
			}
			assert.Less(t, rss, int64(singleTarget))
		})
	}
}

func TestDecodeMemoryConcurrent(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies memory use")
	}
	if !longTests() {
		t.Skip("set HARNESS_LONG_TESTS=1: eight decodes at the pixel limit take a while")
	}
	dir := t.TempDir()
	for _, b := range bombs() {
		if b.name != "rgba16-interlaced.png" && b.name != "photo420.jpg" && b.name != "frame.gif" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			p := filepath.Join(dir, b.name)
			b.write(t, p)
			rss, result := decodeInChild(t, "tool", p)
			t.Logf("eight calls on %s: peak RSS %.1f MiB: %s", b.name, float64(rss)/(1<<20), result)
			assert.Equal(t, strings.Repeat("ok 2048x1953,", 7)+"ok 2048x1953", result)
			assert.Less(t, rss, int64(concurrentTarget))
		})
	}
}

// TestDecodeMemoryOldPath measures, for the record, what the decode cost
// before the streaming reader: image/png's whole image, then scaling.
func TestDecodeMemoryOldPath(t *testing.T) {
	if raceEnabled || !longTests() {
		t.Skip("a reference measurement: set HARNESS_LONG_TESTS=1")
	}
	dir := t.TempDir()
	for _, b := range bombs()[:2] {
		p := filepath.Join(dir, b.name)
		b.write(t, p)
		rss, result := decodeInChild(t, "old", p)
		t.Logf("image/png path on %s: peak RSS %.1f MiB: %s", b.name, float64(rss)/(1<<20), result)
		assert.Greater(t, rss, int64(singleTarget), "the old path was over the target")
	}
}
