package images

import (
	"github.com/go-harness/harness"
)

// Error codes of this package. They are stable: a program may branch on
// them, and they reach the model as the code of a failed read_image call.
const (
	// CodeUnsupportedType: the file is not named as a PNG, JPEG, WebP or
	// GIF image, or it is a variant the decoders cannot read (an
	// animated WebP).
	CodeUnsupportedType harness.Code = "unsupported_image_type"
	// CodeTypeMismatch: the content is a different image format than the
	// file name says.
	CodeTypeMismatch harness.Code = "image_type_mismatch"
	// CodeCorrupt: the content is not a whole, valid image of its type
	// (truncated, corrupt, or not an image at all).
	CodeCorrupt harness.Code = "corrupt_image"
	// CodeTooLarge: the file has more bytes than the limit. It is the
	// same code the file system uses when ReadBytes refuses a file.
	CodeTooLarge harness.Code = "too_large"
	// CodeDimensions: the image declares more pixels, or a longer side,
	// than the limits allow. It is refused before it is decoded.
	CodeDimensions harness.Code = "image_too_large"
	// CodeNoImageInput: the current model does not declare image input
	// (or its capabilities are unknown).
	CodeNoImageInput harness.Code = "image_input_unsupported"
	// CodeNoAttachmentStore: the host configured no attachment store, so
	// there is nowhere to keep the image.
	CodeNoAttachmentStore harness.Code = "no_attachment_store"
	// CodeEncode: re-encoding a downscaled image failed.
	CodeEncode harness.Code = "image_encode_failed"
)

// Error is a refused or failed image, with a stable code and a message
// written for the model: what went wrong and what to do next.
type Error struct {
	Code    harness.Code
	Message string
	// Err is the underlying error, such as a decoder's, if any.
	Err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the error's code.
func (e *Error) ErrorCode() string { return string(e.Code) }
