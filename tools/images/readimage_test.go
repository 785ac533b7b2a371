package images_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/images"
)

var ctx = context.Background()

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x / 40 * 50), uint8(y / 30 * 60), 90, 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func jpegBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 31)
	}
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, img, nil))
	return b.Bytes()
}

func gifBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	require.NoError(t, gif.Encode(&b, img, nil))
	return b.Bytes()
}

// countingFS counts the calls that reach the file system and can replace
// ReadBytes' answer.
type countingFS struct {
	fs.FileSystem
	calls    atomic.Int64
	maxBytes atomic.Int64
	fail     error
}

func (c *countingFS) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	c.calls.Add(1)
	return c.FileSystem.Stat(ctx, p)
}

func (c *countingFS) ReadBytes(ctx context.Context, p string, maxBytes int64) ([]byte, fs.FileInfo, error) {
	c.calls.Add(1)
	c.maxBytes.Store(maxBytes)
	if c.fail != nil {
		return nil, fs.FileInfo{}, c.fail
	}
	return c.FileSystem.ReadBytes(ctx, p, maxBytes)
}

type fixture struct {
	root string
	fsys *countingFS
	att  *countingAttachments
	env  *tools.Env
}

// countingAttachments counts the distinct attachments put into it.
type countingAttachments struct {
	*attachments.Store
	mu   sync.Mutex
	seen map[string]bool
}

func (c *countingAttachments) Put(ctx context.Context, data []byte) (string, error) {
	d, err := c.Store.Put(ctx, data)
	if err == nil {
		c.mu.Lock()
		c.seen[d] = true
		c.mu.Unlock()
	}
	return d, err
}

func (c *countingAttachments) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

func newFixture(t *testing.T, input ...harness.Modality) *fixture {
	t.Helper()
	root := t.TempDir()
	local, err := fslocal.New(root)
	require.NoError(t, err)
	f := &fixture{root: root, fsys: &countingFS{FileSystem: local}, att: &countingAttachments{Store: attachments.NewMemory(), seen: map[string]bool{}}}
	state := &tools.State{}
	t.Cleanup(func() { state.Close() })
	if input == nil {
		input = []harness.Modality{harness.ModalityText, harness.ModalityImage}
	}
	f.env = &tools.Env{SessionID: "s", Cwd: fsimpl.RootOf(local), FS: f.fsys, ModelInput: input, State: state,
		Attachments: f.att, Logger: slog.New(slog.DiscardHandler)}
	return f
}

func (f *fixture) write(t *testing.T, name string, data []byte) {
	t.Helper()
	p := filepath.Join(f.root, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
}

func (f *fixture) call(t *testing.T, tool tools.Tool, path string) (*harness.ToolResult, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"file_path": path})
	return tool.Execute(ctx, &tools.Call{ID: "c1", Name: "read_image", Arguments: string(args), Env: f.env})
}

func TestReadImageSpec(t *testing.T) {
	spec := images.ReadImage(images.Config{}).Spec()
	assert.Equal(t, "read_image", spec.Name)
	assert.True(t, spec.ConcurrencySafe)
	assert.False(t, spec.SideEffects)
	assert.Equal(t, tools.FamilyLocal, spec.Family)
	assert.JSONEq(t, `{"type":"object","required":["file_path"],"properties":{"file_path":{"type":"string","description":"Path of the image file (.png, .jpg, .jpeg, .webp or .gif), absolute or relative to the working directory."}},"additionalProperties":false}`, string(spec.InputSchema))
	_, err := tools.NewRegistry(images.ReadImage(images.Config{}))
	require.NoError(t, err)
}

func TestReadImageHappyPaths(t *testing.T) {
	webpData, err := os.ReadFile(filepath.Join("testdata", "lossy.webp"))
	require.NoError(t, err)
	cases := []struct {
		name string
		data []byte
		mt   string
		w, h int
	}{
		{"shots/a.png", pngBytes(t, 120, 90), "image/png", 120, 90},
		{"b.jpg", jpegBytes(t, 64, 48), "image/jpeg", 64, 48},
		{"c.JPEG", jpegBytes(t, 10, 20), "image/jpeg", 10, 20},
		{"d.webp", webpData, "image/webp", 40, 30},
		{"e.gif", gifBytes(t, 33, 11), "image/gif", 33, 11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.write(t, c.name, c.data)
			res, err := f.call(t, images.ReadImage(images.Config{}), c.name)
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Len(t, res.Content, 2)
			abs := f.env.Cwd + "/" + c.name
			assert.Equal(t, harness.BlockText, res.Content[0].Type)
			assert.Equal(t, res.Content[0].Text, strings.Join([]string{abs + ": " + c.mt, ", ", dims(c.w, c.h), " px, ", itoa(len(c.data)), " bytes."}, ""))
			img := res.Content[1].Image
			require.NotNil(t, img)
			assert.Equal(t, harness.Image{Digest: attdigest.Of(c.data), MediaType: c.mt, Width: c.w, Height: c.h, Size: int64(len(c.data)), Name: abs}, *img)
			stored, err := f.att.Get(ctx, img.Digest)
			require.NoError(t, err)
			assert.Equal(t, c.data, stored, "within budget, the stored bytes are the file's")
			require.Len(t, res.Files, 1)
			st, err := f.fsys.FileSystem.Stat(ctx, abs)
			require.NoError(t, err)
			assert.Equal(t, harness.FileAccess{Op: harness.FileRead, Path: abs, Version: st.Version, Complete: true}, res.Files[0])
			v, ok := f.env.Ledger().Version(abs)
			assert.True(t, ok, "the read counts as observing the file")
			assert.Equal(t, st.Version, v)
			assert.Equal(t, harness.RenderGeneric, res.Render.Kind)
		})
	}
}

func dims(w, h int) string { return itoa(w) + "x" + itoa(h) }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestReadImageDownscaleFactor(t *testing.T) {
	f := newFixture(t)
	data := pngBytes(t, 3000, 100)
	f.write(t, "wide.png", data)
	res, err := f.call(t, images.ReadImage(images.Config{}), f.root+"/wide.png")
	require.NoError(t, err)
	text := res.Content[0].Text
	assert.Contains(t, text, "image/png, 2048x68 px")
	assert.Contains(t, text, "Downscaled from 3000x100 px (image/png, "+itoa(len(data))+" bytes): multiply coordinates in this image by 1.465 to get pixel coordinates in the file.")
	img := res.Content[1].Image
	stored, err := f.att.Get(ctx, img.Digest)
	require.NoError(t, err)
	assert.Equal(t, int64(len(stored)), img.Size)
	cfg, err := png.DecodeConfig(bytes.NewReader(stored))
	require.NoError(t, err)
	assert.Equal(t, [2]int{2048, 68}, [2]int{cfg.Width, cfg.Height})

	// A smaller budget from the options.
	res, err = f.call(t, images.ReadImage(images.Config{Limits: images.Limits{LongEdge: 300}}), "wide.png")
	require.NoError(t, err)
	assert.Contains(t, res.Content[0].Text, "300x10 px")
	assert.Contains(t, res.Content[0].Text, "multiply coordinates in this image by 10 ")
}

func TestReadImageRefusedBeforeIO(t *testing.T) {
	pngData := pngBytes(t, 8, 8)
	cases := []struct {
		name  string
		input []harness.Modality
		store bool
		path  string
		code  harness.Code
		msg   string
	}{
		{"text-only model", []harness.Modality{harness.ModalityText}, true, "a.png", images.CodeImageInputUnsupported, "Switch to an image-capable model"},
		{"unknown capabilities", []harness.Modality{}, true, "a.png", images.CodeImageInputUnsupported, "does not declare"},
		{"no attachment store", nil, false, "a.png", images.CodeNoAttachmentStore, "agent.Stores.Attachments"},
		{"not an image name", nil, true, "a.txt", images.CodeUnsupportedImageType, "Use read for text files"},
		{"no extension", nil, true, "Makefile", images.CodeUnsupportedImageType, "no extension"},
		{"empty path", nil, true, " ", harness.CodeInvalidArguments, "file_path is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.input...)
			if !c.store {
				f.env.Attachments = nil
			}
			f.write(t, "a.png", pngData)
			_, err := f.call(t, images.ReadImage(images.Config{}), c.path)
			require.Error(t, err)
			assert.Equal(t, c.code, harness.CodeOf(err))
			assert.Contains(t, err.Error(), c.msg)
			assert.Zero(t, f.fsys.calls.Load(), "refused before any I/O")
			assert.Zero(t, f.att.Len())
			_, seen := f.env.Ledger().Version(f.env.Resolve(c.path))
			assert.False(t, seen, "a refused image is not observed")
		})
	}
}

func TestReadImageTooLarge(t *testing.T) {
	f := newFixture(t)
	data := jpegBytes(t, 300, 300)
	require.Greater(t, len(data), 1000)
	f.write(t, "big.jpg", data)

	// Refused by its size: ReadBytes gets the cap and stops at stat.
	tool := images.ReadImage(images.Config{Limits: images.Limits{MaxBytes: 1000}})
	_, err := f.call(t, tool, "big.jpg")
	require.Error(t, err)
	assert.Equal(t, harness.CodeTooLarge, harness.CodeOf(err))
	assert.Equal(t, harness.CodeTooLarge, harness.CodeOf(err))
	assert.Contains(t, err.Error(), "at most 1000 bytes")
	assert.Equal(t, int64(1000), f.fsys.maxBytes.Load())

	// The default cap is 20 MiB.
	_, err = f.call(t, images.ReadImage(images.Config{}), "big.jpg")
	require.NoError(t, err)
	assert.Equal(t, int64(20<<20), f.fsys.maxBytes.Load())

	// A file that grows past the cap while it is read: the file system
	// refuses it with the same code, and the tool says what happened.
	f.fsys.fail = fs.NewError(harness.CodeTooLarge, &fs.PathError{Op: "read", Path: f.env.Cwd + "/big.jpg", Detail: "the file grew past 1000 bytes while it was read", Limit: 1000})
	_, err = f.call(t, tool, "big.jpg")
	require.Error(t, err)
	assert.Equal(t, harness.CodeTooLarge, harness.CodeOf(err))
	assert.Contains(t, err.Error(), "grew past 1000 bytes while it was read")
	assert.Equal(t, 1, f.att.Len(), "nothing more was stored")
}

func TestReadImageValidationErrors(t *testing.T) {
	f := newFixture(t)
	pngData := pngBytes(t, 50, 50)
	f.write(t, "shot.jpg", pngData)
	f.write(t, "cut.png", pngData[:len(pngData)/2])
	f.write(t, "dir.png/x", []byte("x"))
	for _, c := range []struct {
		path string
		code harness.Code
		msg  string
	}{
		{"shot.jpg", images.CodeImageTypeMismatch, "Rename it to " + f.env.Cwd + "/shot.png"},
		{"cut.png", images.CodeCorruptImage, "truncated"},
		{"missing.png", harness.CodeNotFound, "Image not found: " + f.env.Cwd + "/missing.png (relative paths are resolved against the working directory"},
		{"dir.png", harness.CodeNotRegular, "not a regular file"},
		{"../outside.png", harness.CodeOutsideRoot, "outside the workspace"},
	} {
		t.Run(c.path, func(t *testing.T) {
			_, err := f.call(t, images.ReadImage(images.Config{}), c.path)
			require.Error(t, err)
			assert.Equal(t, c.code, harness.CodeOf(err))
			assert.Contains(t, err.Error(), c.msg)
			_, seen := f.env.Ledger().Version(f.env.Resolve(c.path))
			assert.False(t, seen, "a refused image is not observed")
		})
	}
	assert.Zero(t, f.att.Len())
}

func TestReadImageMemFS(t *testing.T) {
	mem := fstest.NewMemFS("/ws")
	data := pngBytes(t, 20, 10)
	require.NoError(t, mem.SetFile("/ws/a.png", data, 0o644))
	state := &tools.State{}
	defer state.Close()
	att := attachments.NewMemory()
	env := &tools.Env{Cwd: "/ws", FS: mem, ModelInput: []harness.Modality{harness.ModalityImage}, State: state, Attachments: att, Logger: slog.New(slog.DiscardHandler)}
	res, err := images.ReadImage(images.Config{}).Execute(ctx, &tools.Call{Arguments: `{"file_path":"a.png"}`, Env: env})
	require.NoError(t, err)
	assert.Equal(t, "/ws/a.png: image/png, 20x10 px, "+itoa(len(data))+" bytes.", res.Content[0].Text)
	_, ok := env.Ledger().Version("/ws/a.png")
	assert.True(t, ok)
}

// gateFS holds every ReadBytes call until the test lets it go, and counts
// the calls that got that far.
type gateFS struct {
	fs.FileSystem
	entered chan struct{}
	release chan struct{}
	inside  atomic.Int64
}

func (g *gateFS) ReadBytes(ctx context.Context, p string, maxBytes int64) ([]byte, fs.FileInfo, error) {
	g.inside.Add(1)
	select {
	case g.entered <- struct{}{}:
	case <-ctx.Done():
		return nil, fs.FileInfo{}, ctx.Err()
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, fs.FileInfo{}, ctx.Err()
	}
	return g.FileSystem.ReadBytes(ctx, p, maxBytes)
}

func TestReadImageBoundsConcurrentDecodes(t *testing.T) {
	leakcheck.Check(t)
	for _, c := range []struct {
		cfg   images.Config
		slots int
	}{{images.Config{}, 2}, {images.Config{ConcurrentDecodes: 1}, 1}, {images.Config{ConcurrentDecodes: 3}, 3}} {
		t.Run(itoa(c.slots), func(t *testing.T) {
			f := newFixture(t)
			f.write(t, "a.png", pngBytes(t, 30, 20))
			gate := &gateFS{FileSystem: f.fsys, entered: make(chan struct{}), release: make(chan struct{})}
			f.env.FS = gate
			tool := images.ReadImage(c.cfg)
			args := []byte(`{"file_path":"a.png"}`)
			errs := make(chan error, c.slots+1)
			for range c.slots {
				go func() {
					_, err := tool.Execute(ctx, &tools.Call{Arguments: string(args), Env: f.env})
					errs <- err
				}()
			}
			for range c.slots {
				<-gate.entered
			}
			// Every slot is taken: one more call waits, and gives up
			// when its context ends, without touching the file system.
			waiting, cancel := context.WithCancel(ctx)
			cancel()
			_, err := tool.Execute(waiting, &tools.Call{Arguments: string(args), Env: f.env})
			assert.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, int64(c.slots), gate.inside.Load())

			// A slot freed is taken by the next call.
			gate.release <- struct{}{}
			require.NoError(t, <-errs)
			go func() {
				_, err := tool.Execute(ctx, &tools.Call{Arguments: string(args), Env: f.env})
				errs <- err
			}()
			<-gate.entered
			assert.Equal(t, int64(c.slots+1), gate.inside.Load())
			for range c.slots {
				gate.release <- struct{}{}
				require.NoError(t, <-errs)
			}
			// Another tool value has slots of its own.
			other := images.ReadImage(c.cfg)
			go func() {
				_, err := other.Execute(ctx, &tools.Call{Arguments: string(args), Env: f.env})
				errs <- err
			}()
			<-gate.entered
			gate.release <- struct{}{}
			require.NoError(t, <-errs)
		})
	}
}

func TestReadImageDecodeBudget(t *testing.T) {
	f := newFixture(t)
	f.write(t, "wide.png", pngBytes(t, 3000, 100))
	tool := images.ReadImage(images.Config{Limits: images.Limits{MaxDecodeBytes: 1 << 20}})
	_, err := f.call(t, tool, "wide.png")
	require.Error(t, err)
	assert.Equal(t, harness.CodeTooLarge, harness.CodeOf(err))
	assert.Contains(t, err.Error(), "wide.png (8-bit RGB PNG, 3000x100 pixels) would take about")
	assert.Contains(t, err.Error(), "convert wide.png -resize 2048x2048 smaller.png")
	assert.Zero(t, f.att.Len())
	_, seen := f.env.Ledger().Version(f.env.Resolve("wide.png"))
	assert.False(t, seen, "a refused image is not observed")
}
