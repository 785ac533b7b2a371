package images

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

// Config configures the read_image tool. The zero value is the default.
// A negative field is an error, which the tool's Validate method reports
// (so tools.NewRegistry refuses the tool).
type Config struct {
	// Limits bound the images the tool accepts and the size it sends
	// on; a zero field keeps its default (see Limits).
	Limits Limits
	// ConcurrentDecodes is how many calls of one tool value may read,
	// decode and store an image at once (2, whatever the machine). Each
	// may hold up to Limits.MaxDecodeBytes plus the file's bytes, so
	// together they bound the tool's memory; further calls wait their
	// turn, or give up when their context ends.
	ConcurrentDecodes int
}

// defaultConcurrentDecodes is how many read_image calls decode at once
// by default.
const defaultConcurrentDecodes = 2

type config struct {
	lim Limits
	err error // invalid values, reported by Validate
	// slots holds a token for every call that is reading, decoding or
	// storing an image; its capacity is how many may do so at once.
	slots chan struct{}
}

// collectAfter is the estimated decode memory from which a call runs a
// garbage collection when it is done.
const collectAfter = 32 << 20

type readImageArgs struct {
	FilePath string `json:"file_path" jsonschema:"Path of the image file (.png, .jpg, .jpeg, .webp or .gif), absolute or relative to the working directory."`
}

// ReadImage returns the read_image tool: it shows the model an image file
// (PNG, JPEG, WebP or GIF) from the session's file system.
//
// The tool needs an attachment store, where the image is kept
// content-addressed so the session log holds a reference and never the
// bytes. Register it only when the loop has one:
//
//	att := attachments.NewFiles(filepath.Join(sessionsDir, "attachments"))
//	loop, err := agent.New(
//		agent.WithStores(agent.Stores{Attachments: att}),
//		agent.WithTools(images.ReadImage(images.Config{})),
//		...
//	)
//
// A deployment without an attachment store should not offer the tool at
// all: the model would see a schema it can never use. If it is offered
// anyway, every call is refused with CodeNoAttachmentStore.
//
// Before any I/O a call checks the extension, and that the session's
// current model declares image input (ModalityImage in Env.ModelInput; a model whose
// capabilities are unknown counts as text-only): otherwise it is refused
// with CodeImageInputUnsupported, telling the model to switch to
// an image-capable one. The bytes come through FileSystem.ReadBytes with the file-size
// limit, so a file over it (by its size, or because it grew while read)
// is refused as too_large, never truncated. They are then validated and
// normalized by Normalize, stored, and the result carries a short text
// line (media type, size in pixels and bytes, and the factor to multiply
// coordinates by when the image was downscaled) plus the image. The read
// counts as observing the file in the session's ledger (Env.Ledger).
// Calls are concurrency-safe; at most two of one tool value (see
// Config.ConcurrentDecodes) read and decode at once, so concurrent calls on
// huge images stay within a bounded amount of memory. A call whose decode
// was estimated at 32 MiB or more runs a garbage collection
// (runtime.GC) before the next call may start, so that the next decode
// does not pile its buffers onto this one's uncollected garbage.
func ReadImage(cfg Config) tools.Tool {
	l := cfg.Limits
	var c config
	if l.MaxBytes < 0 || l.MaxPixels < 0 || l.MaxSide < 0 || l.LongEdge < 0 || l.MaxDecodeBytes < 0 || cfg.ConcurrentDecodes < 0 {
		c.err = toolexec.OptionError("images: Config%+v: limits must not be negative (zero keeps a default)", cfg)
	}
	c.lim = l.withDefaults()
	c.slots = make(chan struct{}, cmp.Or(max(cfg.ConcurrentDecodes, 0), defaultConcurrentDecodes))
	return toolexec.Checked(tools.Define(tools.Spec{
		Name:            "read_image",
		Description:     c.description(),
		ConcurrencySafe: true,
		Family:          tools.FamilyLocal,
		NeedsFS:         true,
		Render:          harness.RenderGeneric,
	}, c.run), c.err)
}

func (c config) description() string {
	return fmt.Sprintf("Show an image file (PNG, JPEG, WebP or GIF) to you, so you can look at a screenshot, a rendered chart or a photo. "+
		"The file's extension must match its content. Files up to %s are accepted; images larger than %d px on their longer side are downscaled, "+
		"and the result says by what factor, so you can map coordinates back to the file. Of a GIF, you see the first frame. "+
		"Works only when your model accepts image input. Use read for text files.",
		units.Bytes(c.lim.MaxBytes), c.lim.LongEdge)
}

func (c config) run(ctx context.Context, call *tools.Call, in readImageArgs) (*harness.ToolResult, error) {
	given := strings.TrimSpace(in.FilePath)
	if given == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments,
			Message: "file_path is empty. Give the path of the image file, absolute or relative to the working directory."}
	}
	if _, ok := mediaTypeOf(given); !ok {
		return nil, unsupportedExt(given)
	}
	env := call.Env
	if !slices.Contains(env.ModelInput, harness.ModalityImage) {
		return nil, &harness.Error{Code: CodeImageInputUnsupported, Message: fmt.Sprintf(
			"Cannot show %s: the current model does not accept image input (or does not declare that it does). "+
				"Switch to an image-capable model and call read_image again, or inspect the file another way.", given)}
	}
	if env.Attachments == nil {
		return nil, &harness.Error{Code: CodeNoAttachmentStore, Message: "read_image cannot be used in this session: the host configured no attachment store to keep images in " +
			"(the program must pass agent.Stores.Attachments). Do not retry; inspect the file another way."}
	}
	if env.FS == nil {
		return nil, &harness.Error{Code: harness.CodeToolFailed, Message: "read_image has no file system in this session, so it cannot read files."}
	}
	p := env.Resolve(given)
	// The file's bytes and the decode's buffers are the memory a call
	// holds: take a slot before reading, keep it until the image is
	// stored.
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var need int64
	defer func() {
		if need >= collectAfter {
			// Go collects garbage when the heap has grown to twice what
			// was live at the last collection, so the next decode would
			// stack its buffers on this one's garbage: with two decodes
			// at a time, the process would grow to about twice the
			// memory they need. Collect before handing the slot on.
			runtime.GC()
		}
		<-c.slots
	}()
	data, info, err := env.FS.ReadBytes(ctx, p, c.lim.MaxBytes)
	if err != nil {
		return nil, c.explain(ctx, env, p, given, err)
	}
	if info.Path != "" {
		p = info.Path
	}
	n, need, err := normalize(ctx, p, data, c.lim)
	if err != nil {
		return nil, err
	}
	digest, err := env.Attachments.Put(ctx, n.Data)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		toolexec.Logger(env).Error("read_image: storing the image failed", "path", p, "error", err)
		return nil, &harness.Error{Code: harness.CodeToolFailed, Err: err,
			Message: fmt.Sprintf("%s is a valid image, but storing it for the conversation failed (%v). Try again later.", p, err)}
	}
	if l := env.Ledger(); l != nil && info.Version != "" {
		l.Observe(p, info.Version)
	}
	line := summary(p, n)
	img := &harness.Image{Digest: digest, MediaType: n.MediaType, Width: n.Width, Height: n.Height, Size: int64(len(n.Data)), Name: p}
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(line), {Type: harness.BlockImage, Image: img}},
		Render:  &harness.Render{Kind: harness.RenderGeneric, Title: "read_image " + p, Text: line},
		Files:   []harness.FileAccess{{Op: harness.FileRead, Path: p, Version: info.Version, Complete: true}},
	}, nil
}

// summary is the text line that goes with the image.
func summary(p string, n *Normalized) string {
	s := fmt.Sprintf("%s: %s, %dx%d px, %d bytes", p, n.MediaType, n.Width, n.Height, len(n.Data))
	switch {
	case n.Scale() > 1:
		s += fmt.Sprintf(". Downscaled from %dx%d px (%s, %d bytes): multiply coordinates in this image by %.4g to get pixel coordinates in the file.",
			n.SourceWidth, n.SourceHeight, n.SourceMediaType, n.SourceBytes, n.Scale())
	case n.Reencoded && n.SourceMediaType == typeGIF:
		s += fmt.Sprintf(". The first frame of an animated GIF (%s), at full size.", units.Bytes(int64(n.SourceBytes)))
	case n.Reencoded:
		s += fmt.Sprintf(". Converted from a CMYK %s (%s) to RGB, at full size.", formatName(n.SourceMediaType), units.Bytes(int64(n.SourceBytes)))
	default:
		s += "."
	}
	return s
}

// explain turns a file system error into one the model can act on.
func (c config) explain(ctx context.Context, env *tools.Env, p, given string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return ctxErr
	}
	code := harness.CodeOf(err)
	if code == harness.CodeUnknown {
		code = harness.CodeIO
	}
	var fe *fs.PathError
	errors.As(err, &fe)
	rel := ""
	if !strings.HasPrefix(given, "/") {
		rel = fmt.Sprintf(" (relative paths are resolved against the working directory %s)", env.Cwd)
	}
	var msg string
	switch code {
	case harness.CodeNotFound:
		msg = fmt.Sprintf("Image not found: %s%s. Check the path; list the directory with bash (ls) if unsure.", p, rel)
	case harness.CodeTooLarge:
		size := ""
		if fe != nil && fe.Total > 0 {
			size = fmt.Sprintf(" (%s)", units.Bytes(fe.Total))
		}
		msg = fmt.Sprintf("%s is too large%s: read_image reads files of at most %s. Make a smaller copy (scale it down or crop the part that matters) and read that.",
			p, size, units.Bytes(c.lim.MaxBytes))
		if fe != nil && strings.Contains(fe.Detail, "grew") {
			msg = fmt.Sprintf("%s grew past %s while it was read: read_image reads files of at most %s. Wait until whatever writes it has finished, or make a smaller copy, then read it again.",
				p, units.Bytes(c.lim.MaxBytes), units.Bytes(c.lim.MaxBytes))
		}
	case harness.CodeNotRegular:
		msg = fmt.Sprintf("%s is not a regular file (a directory, device, pipe or socket). Give the path of an image file.", p)
	case harness.CodeNotDir:
		msg = fmt.Sprintf("Cannot read %s: a directory on its path is a file. Check the path.", p)
	case harness.CodePermission:
		msg = fmt.Sprintf("Permission denied reading %s.", p)
	case harness.CodeOutsideRoot:
		msg = fmt.Sprintf("%s is outside the workspace this session may read. Read files inside it.", p)
	case harness.CodeInvalidPath:
		msg = fmt.Sprintf("%q is not a valid path%s. Give a plain path to the image file.", given, rel)
	default:
		msg = fmt.Sprintf("Reading %s failed: %v.", p, err)
	}
	return &harness.Error{Code: harness.Code(code), Message: msg, Err: err}
}
