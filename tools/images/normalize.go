package images

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"path"
	"strings"

	"github.com/gabriel-vasile/mimetype"
	"golang.org/x/image/webp"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/units"
)

// Media types of the formats read_image accepts.
const (
	typePNG  = "image/png"
	typeJPEG = "image/jpeg"
	typeWebP = "image/webp"
	typeGIF  = "image/gif"
)

// Default limits: see defaultLimits.
const (
	// defaultMaxBytes is the largest image file accepted: 20 MiB.
	defaultMaxBytes = 20 << 20
	// defaultMaxPixels is the largest pixel count accepted.
	defaultMaxPixels = 64_000_000
	// defaultMaxSide is the longest side accepted, in pixels.
	defaultMaxSide = 8192
	// defaultLongEdge is the long-edge budget: larger images are
	// downscaled to it.
	defaultLongEdge = 2048
	// defaultMaxDecodeBytes is the most memory one image may need to be
	// decoded, scaled and re-encoded: 128 MiB. Every PNG within the
	// other limits fits (it is read a row at a time), and so does a
	// baseline 4:2:0 JPEG, a lossy WebP and a GIF at the full pixel
	// limit; a progressive JPEG, a 4:4:4 or CMYK one, or a lossless WebP
	// fits up to roughly 8 to 20 Mpx.
	defaultMaxDecodeBytes = 128 << 20
)

// jpegQuality is the quality re-encoded JPEGs are written with.
const jpegQuality = 90

// Limits bound the images Normalize and the read_image tool accept and
// the size they send on. A zero field means its default: 20 MiB,
// 64,000,000 pixels, 8192 px per side, a 2048 px long edge, 128 MiB to
// decode.
type Limits struct {
	// MaxBytes is the largest file accepted, in bytes.
	MaxBytes int64
	// MaxPixels is the largest width × height accepted. It is checked
	// from the header, before any pixel is decoded.
	MaxPixels int64
	// MaxSide is the longest width or height accepted, checked from the
	// header.
	MaxSide int
	// LongEdge is the long-edge budget: an image whose width or height
	// exceeds it is downscaled so that its longer side equals it.
	LongEdge int
	// MaxDecodeBytes is the most memory, in bytes, that decoding,
	// downscaling and re-encoding one image may take, not counting the
	// file's own bytes. It is estimated from the headers before any
	// pixel is decoded. The default, 128 MiB, fits every PNG within the
	// other limits (it is read a row at a time), a baseline 4:2:0 JPEG, a
	// lossy WebP and a GIF at the full pixel limit; a progressive JPEG, a
	// 4:4:4 or CMYK one, or a lossless WebP fits up to roughly 8 to 20
	// Mpx.
	MaxDecodeBytes int64
}

// defaultLimits returns the default limits.
func defaultLimits() Limits {
	return Limits{MaxBytes: defaultMaxBytes, MaxPixels: defaultMaxPixels, MaxSide: defaultMaxSide, LongEdge: defaultLongEdge,
		MaxDecodeBytes: defaultMaxDecodeBytes}
}

// withDefaults returns l with its zero fields set to the defaults.
func (l Limits) withDefaults() Limits {
	d := defaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = d.MaxPixels
	}
	if l.MaxSide <= 0 {
		l.MaxSide = d.MaxSide
	}
	if l.LongEdge <= 0 {
		l.LongEdge = d.LongEdge
	}
	if l.MaxDecodeBytes <= 0 {
		l.MaxDecodeBytes = d.MaxDecodeBytes
	}
	return l
}

var extTypes = map[string]string{
	".png":  typePNG,
	".jpg":  typeJPEG,
	".jpeg": typeJPEG,
	".webp": typeWebP,
	".gif":  typeGIF,
}

// extensions lists the file name extensions read_image accepts.
func extensions() []string { return []string{".png", ".jpg", ".jpeg", ".webp", ".gif"} }

// mediaTypeOf returns the media type a file name declares by its
// extension (case-insensitive), and false when the extension is not one
// of an accepted format.
func mediaTypeOf(name string) (string, bool) {
	t, ok := extTypes[strings.ToLower(path.Ext(name))]
	return t, ok
}

// extensionFor returns the usual extension of an accepted media type.
func extensionFor(mediaType string) string {
	switch mediaType {
	case typeJPEG:
		return ".jpg"
	case typePNG:
		return ".png"
	case typeWebP:
		return ".webp"
	case typeGIF:
		return ".gif"
	}
	return ""
}

func formatName(mediaType string) string {
	switch mediaType {
	case typePNG:
		return "PNG"
	case typeJPEG:
		return "JPEG"
	case typeWebP:
		return "WebP"
	case typeGIF:
		return "GIF"
	}
	return mediaType
}

// Normalized is an image ready to be stored and shown to a model.
type Normalized struct {
	// Data is the bytes to store: the file itself when it passed through,
	// otherwise the re-encoded image.
	Data []byte
	// MediaType is Data's media type.
	MediaType string
	// Width and Height are Data's dimensions in pixels.
	Width, Height int
	// SourceMediaType, SourceWidth, SourceHeight and SourceBytes describe
	// the file as it was read.
	SourceMediaType           string
	SourceWidth, SourceHeight int
	SourceBytes               int
	// Reencoded reports that Data is not the file's bytes: the image was
	// downscaled, or converted to a form models read reliably (the first
	// frame of an animated GIF, a CMYK JPEG as RGB). Re-encoding drops
	// metadata.
	Reencoded bool
}

// Scale returns the factor that maps a coordinate in the normalized image
// to the source image: multiply x and y by it. It is 1 when the image was
// not downscaled, and above 1 when it was (a downscale always shrinks the
// longer side), so n.Scale() > 1 asks "was it made smaller?".
func (n *Normalized) Scale() float64 {
	a, b := max(n.SourceWidth, n.SourceHeight), max(n.Width, n.Height)
	if b == 0 || a <= b {
		return 1
	}
	return float64(a) / float64(b)
}

// Normalize validates an image file's bytes and prepares them for a model.
// name is the file's name or path: its extension declares the format, and
// it appears in error messages.
//
// The content decides: a PNG, JPEG, WebP or GIF whose format differs from
// the extension is refused with a rename remedy. The header is read next
// (image.DecodeConfig); width, height and pixel count are checked against
// lim before any pixel is decoded, so a small file declaring huge
// dimensions costs almost nothing. The memory the decode will need is
// then estimated from the headers (bit depth, colour type and interlacing
// of a PNG, chroma subsampling and progressive coding of a JPEG, the kind
// of WebP, the size of a GIF's first frame), and an image whose estimate
// exceeds lim.MaxDecodeBytes is refused with
// harness.CodeTooLarge. A full
// decode then proves the image is whole: a PNG is read a row at a time,
// never held whole, and validated exactly as image/png would. An image
// within the long-edge budget passes through byte-identical, except the
// first frame of an animated GIF, which is re-encoded as PNG, and a CMYK
// JPEG, which is re-encoded as RGB. A larger image is downscaled by area
// averaging and re-encoded: PNG when it has transparency, a palette or few
// colours (screenshots, diagrams), JPEG otherwise (photos). Re-encoding
// drops metadata.
//
// Normalize does not limit how many calls run at once; the read_image
// tool does (Config.ConcurrentDecodes).
//
// Errors are *harness.Error values with a stable code, or ctx's error.
func Normalize(ctx context.Context, name string, data []byte, lim Limits) (*Normalized, error) {
	n, _, err := normalize(ctx, name, data, lim)
	return n, err
}

// normalize is Normalize, also returning the decode's estimated memory
// need (0 when the image was refused before it was estimated).
func normalize(ctx context.Context, name string, data []byte, lim Limits) (*Normalized, int64, error) {
	lim = lim.withDefaults()
	c, err := check(name, data, lim)
	if err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, c.need, err
	}
	n := &Normalized{
		Data: data, MediaType: c.mediaType, Width: c.width, Height: c.height,
		SourceMediaType: c.mediaType, SourceWidth: c.width, SourceHeight: c.height, SourceBytes: len(data),
	}
	if c.mediaType == typePNG {
		n, err = normalizePNG(ctx, name, data, n, lim)
	} else {
		n, err = normalizeDecoded(ctx, name, data, n, lim)
	}
	return n, c.need, err
}

// checked is what Normalize knows of an image before decoding it.
type checked struct {
	mediaType     string
	width, height int
	need          int64 // the estimated memory need of the decode
}

// check does everything that needs no decoding: the extension, the size,
// the content's type, the header's dimensions, the memory budget.
func check(name string, data []byte, lim Limits) (checked, error) {
	declared, ok := mediaTypeOf(name)
	if !ok {
		return checked{}, unsupportedExt(name)
	}
	if int64(len(data)) > lim.MaxBytes {
		return checked{}, &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf(
			"%s is %d bytes, over the %d-byte limit for images. Make a smaller copy (scale it down or crop it) and read that.", name, len(data), lim.MaxBytes)}
	}
	actual, err := sniff(name, declared, data)
	if err != nil {
		return checked{}, err
	}
	if actual != declared {
		base := strings.TrimSuffix(name, path.Ext(name))
		return checked{}, &harness.Error{Code: CodeImageTypeMismatch, Message: fmt.Sprintf(
			"%s is named as a %s image, but its content is %s. Rename it to %s (or copy it under that name) and call read_image on the new name.",
			name, formatName(declared), formatName(actual), base+extensionFor(actual))}
	}
	cfg, err := decodeConfig(actual, data)
	if err != nil {
		return checked{}, corrupt(name, actual, data, err)
	}
	if err := checkDimensions(name, cfg.Width, cfg.Height, lim); err != nil {
		return checked{}, err
	}
	if actual == typeWebP && webpAnimated(data) {
		return checked{}, &harness.Error{Code: CodeUnsupportedImageType, Message: fmt.Sprintf(
			"%s is an animated WebP, which read_image cannot decode. Extract one frame as PNG (for example with ffmpeg or ImageMagick) and read that.", name)}
	}
	need, what := memoryNeed(actual, data, cfg.Width, cfg.Height, lim)
	if need > lim.MaxDecodeBytes {
		return checked{}, tooCostly(name, what, cfg.Width, cfg.Height, need, lim)
	}
	return checked{mediaType: actual, width: cfg.Width, height: cfg.Height, need: need}, nil
}

// normalizeDecoded validates a JPEG, WebP or GIF by decoding it whole,
// and downscales or converts it when it must.
func normalizeDecoded(ctx context.Context, name string, data []byte, n *Normalized, lim Limits) (*Normalized, error) {
	mt, w, h := n.SourceMediaType, n.SourceWidth, n.SourceHeight
	img, err := decode(mt, data)
	if err != nil {
		return nil, corrupt(name, mt, data, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, cmyk := img.(*image.CMYK)
	multiFrame := mt == typeGIF && gifFrames(data) > 1
	scaled := max(w, h) > lim.LongEdge
	if !scaled && !cmyk && !multiFrame {
		return n, nil // within budget: byte-identical
	}
	screen := image.Rect(0, 0, w, h)
	if f, ok := img.(*image.Paletted); ok && mt == typeGIF && f.Bounds() != screen {
		// A first frame smaller than the logical screen: it sits on a
		// transparent canvas of the screen's size.
		img = &gifCanvas{frame: f, rect: screen}
	}
	asPNG := wantPNG(img, mt, data)
	out := img
	if scaled {
		nw, nh := fitLongEdge(w, h, lim.LongEdge)
		if out, err = areaScale(ctx, img, nw, nh); err != nil {
			return nil, err
		}
	}
	if c, ok := out.(*gifCanvas); ok { // a full-size re-encode of an offset frame
		canvas := image.NewNRGBA(c.rect)
		draw.Draw(canvas, c.frame.Bounds(), c.frame, c.frame.Bounds().Min, draw.Src)
		out = canvas
	}
	return finish(name, n, out, asPNG, lim)
}

// normalizePNG validates a PNG, and downscales it when it is over the
// long-edge budget, reading it a row at a time.
func normalizePNG(ctx context.Context, name string, data []byte, n *Normalized, lim Limits) (*Normalized, error) {
	w, h := n.SourceWidth, n.SourceHeight
	if max(w, h) <= lim.LongEdge {
		if _, err := readPNG(ctx, data, nil); err != nil {
			return nil, pngFailed(ctx, name, data, err)
		}
		return n, nil // within budget: byte-identical
	}
	hd, ok := readPNGHeader(data)
	if !ok {
		return nil, corrupt(name, typePNG, data, errors.New("png: no IHDR chunk"))
	}
	nw, nh := fitLongEdge(w, h, lim.LongEdge)
	sample := newColourSample(w, h, fewColourLimit)
	row16 := make([]uint16, 4*w)
	var emit pngRow
	var result func() *image.RGBA
	if hd.interlaced {
		s, err := newScatterScaler(w, h, nw, nh)
		if err != nil {
			return nil, &harness.Error{Code: harness.CodeToolFailed, Message: fmt.Sprintf("%s could not be scaled: %v.", name, err), Err: err}
		}
		emit = func(y, x0, dx int, px []uint8) {
			sample.add(y, x0, dx, px)
			premultiply(row16, px)
			s.push(y, x0, dx, row16[:len(px)])
		}
		result = s.image
	} else {
		s := newAreaScaler(w, h, nw, nh)
		emit = func(y, x0, dx int, px []uint8) {
			sample.add(y, x0, dx, px)
			premultiply(row16, px)
			s.push(row16[:len(px)])
		}
		result = func() *image.RGBA { return s.dst }
	}
	info, err := readPNG(ctx, data, emit)
	if err != nil {
		return nil, pngFailed(ctx, name, data, err)
	}
	return finish(name, n, result(), info.Paletted || !info.Opaque || !sample.many, lim)
}

func pngFailed(ctx context.Context, name string, data []byte, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return ctxErr
	}
	return corrupt(name, typePNG, data, err)
}

// finish encodes the image to send on and records it in n.
func finish(name string, n *Normalized, out image.Image, asPNG bool, lim Limits) (*Normalized, error) {
	enc, mt, err := encode(out, asPNG, lim.MaxBytes)
	if errors.Is(err, errOutputTooLarge) {
		return nil, &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf(
			"%s re-encoded to more than %d bytes, over the limit. Make a smaller copy (scale it down or crop it) and read that.", name, lim.MaxBytes)}
	}
	if err != nil {
		return nil, &harness.Error{Code: harness.CodeToolFailed, Message: fmt.Sprintf("%s could not be re-encoded: %v.", name, err), Err: err}
	}
	b := out.Bounds()
	n.Data, n.MediaType, n.Width, n.Height, n.Reencoded = enc, mt, b.Dx(), b.Dy(), true
	return n, nil
}

// tooCostly is the refusal of an image whose decode would need more
// memory than the budget.
func tooCostly(name, what string, w, h int, need int64, lim Limits) error {
	return &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf(
		"%s (%s, %dx%d pixels) would take about %s of memory to decode, over the %s read_image allows. "+
			"Make a smaller copy first, for example with ImageMagick: convert %s -resize %dx%d smaller.png (or scale it down with another tool), then read the copy.",
		name, what, w, h, units.Bytes(need), units.Bytes(lim.MaxDecodeBytes), path.Base(name), lim.LongEdge, lim.LongEdge)}
}

func unsupportedExt(name string) error {
	ext := path.Ext(name)
	what := "has no extension"
	if ext != "" {
		what = fmt.Sprintf("has the extension %q", ext)
	}
	return &harness.Error{Code: CodeUnsupportedImageType, Message: fmt.Sprintf(
		"%s %s; read_image reads PNG, JPEG, WebP and GIF files named %s. Use read for text files; convert other image formats to PNG first.",
		name, what, strings.Join(extensions(), ", "))}
}

// sniff returns the accepted format the content is, or an error saying
// what the content is instead.
func sniff(name, declared string, data []byte) (string, error) {
	if len(data) == 0 {
		return "", &harness.Error{Code: CodeCorruptImage, Message: fmt.Sprintf("%s is empty, not a %s image. Check the path, or produce the image again.", name, formatName(declared))}
	}
	m := mimetype.Detect(data)
	for p := m; p != nil; p = p.Parent() {
		for _, t := range []string{typePNG, typeJPEG, typeWebP, typeGIF} {
			if p.Is(t) {
				return t, nil
			}
		}
	}
	if strings.HasPrefix(m.String(), "image/") {
		return "", &harness.Error{Code: CodeImageTypeMismatch, Message: fmt.Sprintf(
			"%s is named as a %s image, but its content is %s, which read_image does not read. Convert it to PNG and read the converted file.",
			name, formatName(declared), m.String())}
	}
	return "", &harness.Error{Code: CodeCorruptImage, Message: fmt.Sprintf(
		"%s is not a valid %s image: its content looks like %s. Check the path, or produce the image again.",
		name, formatName(declared), m.String())}
}

func corrupt(name, mediaType string, data []byte, err error) error {
	what := "corrupt"
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || truncated(mediaType, data) {
		what = "truncated"
	}
	return &harness.Error{Code: CodeCorruptImage, Err: err, Message: fmt.Sprintf(
		"%s is not a whole %s image: it is %s (%v). Produce or download the image again, then read it.",
		name, formatName(mediaType), what, err)}
}

// truncated reports whether data lacks the end its format requires,
// which tells a cut-off file from a damaged one.
func truncated(mediaType string, data []byte) bool {
	switch mediaType {
	case typePNG:
		return !bytes.HasSuffix(data, []byte("IEND\xaeB`\x82"))
	case typeJPEG:
		return !bytes.Contains(data[max(0, len(data)-1024):], []byte{0xff, 0xd9})
	case typeGIF:
		return len(data) == 0 || data[len(data)-1] != 0x3b
	case typeWebP:
		return len(data) < 8 || int64(binary.LittleEndian.Uint32(data[4:8]))+8 > int64(len(data))
	}
	return false
}

func checkDimensions(name string, w, h int, lim Limits) error {
	if w <= 0 || h <= 0 {
		return &harness.Error{Code: CodeCorruptImage, Message: fmt.Sprintf("%s declares an empty image (%dx%d). Produce the image again.", name, w, h)}
	}
	if w > lim.MaxSide || h > lim.MaxSide || int64(w)*int64(h) > lim.MaxPixels {
		return &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf(
			"%s is %dx%d pixels; the limits are %d px per side and %d pixels in all. Make a smaller copy (scale it down or crop the part that matters) and read that.",
			name, w, h, lim.MaxSide, lim.MaxPixels)}
	}
	return nil
}

// codec returns the decoders of an image and of its configuration for
// mediaType.
func codec(mediaType string) (func(io.Reader) (image.Image, error), func(io.Reader) (image.Config, error), error) {
	switch mediaType {
	case typePNG:
		return png.Decode, png.DecodeConfig, nil
	case typeJPEG:
		return jpeg.Decode, jpeg.DecodeConfig, nil
	case typeWebP:
		return webp.Decode, webp.DecodeConfig, nil
	case typeGIF:
		return gif.Decode, gif.DecodeConfig, nil
	}
	return nil, nil, fmt.Errorf("unsupported media type %s", mediaType)
}

func decodeConfig(mediaType string, data []byte) (image.Config, error) {
	_, config, err := codec(mediaType)
	if err != nil {
		return image.Config{}, err
	}
	return config(bytes.NewReader(data))
}

// decode decodes the image; for a GIF, its first frame.
func decode(mediaType string, data []byte) (image.Image, error) {
	dec, _, err := codec(mediaType)
	if err != nil {
		return nil, err
	}
	return dec(bytes.NewReader(data))
}

func isOpaque(img image.Image) bool {
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

// encode encodes out as PNG or JPEG, in at most maxBytes.
func encode(out image.Image, asPNG bool, maxBytes int64) ([]byte, string, error) {
	buf := &outputBuffer{limit: maxBytes}
	mt := typeJPEG
	var err error
	if asPNG {
		mt = typePNG
		enc := png.Encoder{CompressionLevel: png.DefaultCompression}
		err = enc.Encode(buf, out)
	} else {
		err = jpeg.Encode(buf, out, &jpeg.Options{Quality: jpegQuality})
	}
	if err != nil {
		return nil, "", err
	}
	return buf.bytes(), mt, nil
}

// outputChunk is the size of an outputBuffer's chunks.
const outputChunk = 256 << 10

// errOutputTooLarge stops an encoder whose output outgrows the limit.
var errOutputTooLarge = errors.New("images: the encoded image is over the size limit")

// outputBuffer collects an encoder's output in chunks of a fixed size, so
// that growing it never copies what it holds, and refuses to hold more
// than limit bytes.
type outputBuffer struct {
	chunks [][]byte
	n      int64
	limit  int64
}

func (b *outputBuffer) Write(p []byte) (int, error) {
	if b.n+int64(len(p)) > b.limit {
		return 0, errOutputTooLarge
	}
	b.n += int64(len(p))
	written := len(p)
	for len(p) > 0 {
		if len(b.chunks) == 0 || len(b.chunks[len(b.chunks)-1]) == outputChunk {
			b.chunks = append(b.chunks, make([]byte, 0, outputChunk))
		}
		last := &b.chunks[len(b.chunks)-1]
		k := copy((*last)[len(*last):outputChunk], p)
		*last = (*last)[:len(*last)+k]
		p = p[k:]
	}
	return written, nil
}

// bytes returns the output as one slice and drops the chunks.
func (b *outputBuffer) bytes() []byte {
	out := make([]byte, 0, b.n)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	b.chunks = nil
	return out
}

// wantPNG decides the output format: PNG for images with transparency, a
// palette or few colours, JPEG for opaque photographic images.
func wantPNG(src image.Image, srcType string, srcData []byte) bool {
	if _, ok := src.(*image.Paletted); ok || srcType == typeGIF {
		return true
	}
	if !isOpaque(src) {
		return true
	}
	switch srcType {
	case typeJPEG:
		return false
	case typeWebP:
		if !webpLossless(srcData) {
			return false
		}
	}
	return fewColours(src, fewColourLimit)
}

// fewColourLimit is the most distinct colours (in a sample) an opaque
// image may have to be sent as PNG rather than JPEG.
const fewColourLimit = 4096

// colourSample counts the distinct colours of the pixels on the same grid
// fewColours samples, for pixels that arrive a row (or part of one) at a
// time.
type colourSample struct {
	step, limit int
	seen        map[uint32]struct{}
	many        bool // more than limit colours seen
}

func newColourSample(w, h, limit int) *colourSample {
	step := 1
	for (w/step)*(h/step) > 1<<18 {
		step++
	}
	return &colourSample{step: step, limit: limit, seen: make(map[uint32]struct{}, limit+1)}
}

// add samples the pixels of row y at x = x0, x0+dx, ... (8-bit RGBA).
func (c *colourSample) add(y, x0, dx int, px []uint8) {
	if c.many || y%c.step != 0 {
		return
	}
	for i := 0; 4*i < len(px); i++ {
		if (x0+i*dx)%c.step != 0 {
			continue
		}
		c.seen[uint32(px[4*i])<<16|uint32(px[4*i+1])<<8|uint32(px[4*i+2])] = struct{}{}
		if len(c.seen) > c.limit {
			c.many = true
			c.seen = nil
			return
		}
	}
}

// fewColours reports whether a sample of img's pixels (at most about
// 262,144 of them, on a regular grid) holds at most limit distinct
// colours.
func fewColours(img image.Image, limit int) bool {
	b := img.Bounds()
	step := 1
	for (b.Dx()/step)*(b.Dy()/step) > 1<<18 {
		step++
	}
	seen := make(map[uint32]struct{}, limit+1)
	at := rgbaAt(img)
	for y := b.Min.Y; y < b.Max.Y; y += step {
		for x := b.Min.X; x < b.Max.X; x += step {
			r, g, bl := at(x, y)
			seen[uint32(r)<<16|uint32(g)<<8|uint32(bl)] = struct{}{}
			if len(seen) > limit {
				return false
			}
		}
	}
	return true
}

func rgbaAt(img image.Image) func(x, y int) (uint8, uint8, uint8) {
	if m, ok := img.(image.RGBA64Image); ok {
		return func(x, y int) (uint8, uint8, uint8) {
			c := m.RGBA64At(x, y)
			return uint8(c.R >> 8), uint8(c.G >> 8), uint8(c.B >> 8)
		}
	}
	return func(x, y int) (uint8, uint8, uint8) {
		c := color.RGBA64Model.Convert(img.At(x, y)).(color.RGBA64)
		return uint8(c.R >> 8), uint8(c.G >> 8), uint8(c.B >> 8)
	}
}

// webpAnimated reports whether a WebP file's extended header (VP8X) sets
// the animation flag.
func webpAnimated(data []byte) bool {
	return len(data) >= 21 && string(data[12:16]) == "VP8X" && data[20]&0x02 != 0
}

// webpLossless reports whether a WebP file holds a lossless (VP8L)
// bitstream.
func webpLossless(data []byte) bool {
	for off := 12; off+8 <= len(data); {
		id := string(data[off : off+4])
		n := int(uint32(data[off+4]) | uint32(data[off+5])<<8 | uint32(data[off+6])<<16 | uint32(data[off+7])<<24)
		switch id {
		case "VP8L":
			return true
		case "VP8 ":
			return false
		}
		if n < 0 || n > len(data) {
			return false
		}
		off += 8 + n + n&1
	}
	return false
}

// gifFrames counts the image descriptors of a GIF, stopping at two: it
// walks the block structure without decoding any pixel. A malformed
// stream ends the count where it breaks.
func gifFrames(data []byte) int {
	if len(data) < 13 {
		return 0
	}
	off := 13
	if flags := data[10]; flags&0x80 != 0 {
		off += 3 << ((flags & 7) + 1)
	}
	skipSubBlocks := func() bool {
		for off < len(data) {
			n := int(data[off])
			off++
			if n == 0 {
				return true
			}
			off += n
		}
		return false
	}
	frames := 0
	for off < len(data) && frames < 2 {
		switch data[off] {
		case 0x21: // extension: label, then sub-blocks
			off += 2
			if !skipSubBlocks() {
				return frames
			}
		case 0x2c: // image descriptor
			frames++
			if off+10 > len(data) {
				return frames
			}
			flags := data[off+9]
			off += 10
			if flags&0x80 != 0 {
				off += 3 << ((flags & 7) + 1)
			}
			off++ // LZW minimum code size
			if !skipSubBlocks() {
				return frames
			}
		default: // trailer or garbage
			return frames
		}
	}
	return frames
}
