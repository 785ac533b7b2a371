package images

import "github.com/go-harness/harness"

// The codes only this package reports, besides the shared ones of the
// harness package. Their text is public API like every code's: match
// one with errors.Is(err, harness.Code("...")) or compare ToolResult.Code.
const (
	// codeCorruptImage (corrupt_image): the content is not a whole, valid image of its
	// type.
	codeCorruptImage harness.Code = "corrupt_image"
	// codeImageInputUnsupported (image_input_unsupported): the current model does not declare
	// image input.
	codeImageInputUnsupported harness.Code = "image_input_unsupported"
	// codeImageTypeMismatch (image_type_mismatch): the content is a different image format than
	// the file name says.
	codeImageTypeMismatch harness.Code = "image_type_mismatch"
	// codeNoAttachmentStore (no_attachment_store): no attachment store is configured to keep
	// the image in.
	codeNoAttachmentStore harness.Code = "no_attachment_store"
	// codeUnsupportedImageType (unsupported_image_type): the file is not named as a PNG, JPEG,
	// WebP or GIF image, or it is a variant the decoders cannot read.
	codeUnsupportedImageType harness.Code = "unsupported_image_type"
)
