// Package images validates and normalizes image files for models, and
// provides the read_image tool that shows an image file to the model.
//
// # Normalize
//
// [Normalize] is the validation path. A file's extension declares its
// format (PNG, JPEG, WebP or GIF), and its content decides: a file whose
// content is another format is refused with a rename remedy.
//
// Width, height and pixel count are read from the header and checked
// against [Limits] before any pixel is decoded, so a small file that
// declares huge dimensions (a decompression bomb) is refused cheaply. So
// is one whose decode would need more memory than Limits.MaxDecodeBytes.
// The need is estimated from the headers: a 4:4:4 or progressive JPEG, a
// lossless WebP or an interlaced GIF costs several bytes a pixel. The
// refusal (harness.CodeTooLarge) tells the model to make a smaller copy.
//
// A full decode then proves the image is whole: truncated and corrupt
// files are refused. A PNG is never decoded whole: a reader of this
// package inflates it and handles one row at a time, accepting and
// refusing exactly what image/png does. A 16-bit or interlaced PNG at
// the pixel limit so costs tens of megabytes, not a gigabyte.
//
// An image within the long-edge budget passes through byte-identical. A
// larger one is downscaled by area averaging (each output pixel the
// average of the source area it covers, fed a row at a time, so besides
// the decoded image only the output is held) and re-encoded: as PNG when
// it has transparency, a palette or few colours, as JPEG when it is an
// opaque photograph. Re-encoding drops metadata. Of a GIF, only the
// first frame is kept.
//
// # read_image
//
// [ReadImage] returns the read_image tool, built on Normalize. A host
// registers it only together with an attachment store
// (agent.Stores.Attachments), where each image is kept content-addressed:
// the session log holds a reference, never the bytes.
//
// A call is refused before any I/O when the extension is not an image's,
// or when the session's model does not declare image input (unknown
// capabilities count as none). Otherwise the bytes are read through
// fs.FileSystem.ReadBytes with the size cap, normalized, stored, and
// returned as a short text line plus the image. The read counts as
// observing the file in the session's ledger.
//
// At most two calls of one tool value read and decode at once
// (Config.ConcurrentDecodes), so concurrent calls on huge images stay
// within a few hundred megabytes.
//
// # Errors
//
// Every refusal is a *harness.Error with a stable code and a message,
// written for the model, that says what to do next:
//
//   - harness.CodeTooLarge for the file, the declared pixels and the
//     decode memory;
//   - harness.CodeToolFailed when scaling or re-encoding a valid image
//     fails;
//   - the codes only read_image reports: [CodeUnsupportedImageType],
//     [CodeImageTypeMismatch], [CodeCorruptImage],
//     [CodeImageInputUnsupported] (the model takes no images) and
//     [CodeNoAttachmentStore].
//
// # Decoders
//
// The package reads PNG itself (with compress/zlib), and decodes the
// other formats with image/jpeg, image/gif and golang.org/x/image/webp.
// image/png reads the header and encodes. Content is sniffed with
// github.com/gabriel-vasile/mimetype. No decoder is registered with the
// image package.
//
// It imports harness, fs, tools (the file system and the session's ledger
// come through tools.Env) and internal helpers; nothing of tools/files,
// session or agent.
package images
