package images

import "github.com/go-harness/harness"

// The codes only read_image reports, besides the shared ones of the
// harness package. Match one with errors.Is(err, images.CodeCorruptImage)
// or by comparing a result's Code.
const (
	// CodeCorruptImage: the content is not a whole, valid image of its
	// type.
	CodeCorruptImage harness.Code = "corrupt_image"
	// CodeImageInputUnsupported: the current model does not declare image
	// input.
	CodeImageInputUnsupported harness.Code = "image_input_unsupported"
	// CodeImageTypeMismatch: the content is a different image format than
	// the file name says.
	CodeImageTypeMismatch harness.Code = "image_type_mismatch"
	// CodeNoAttachmentStore: no attachment store is configured to keep
	// the image in.
	CodeNoAttachmentStore harness.Code = "no_attachment_store"
	// CodeUnsupportedImageType: the file is not named as a PNG, JPEG,
	// WebP or GIF image, or it is a variant the decoders cannot read.
	CodeUnsupportedImageType harness.Code = "unsupported_image_type"
)
