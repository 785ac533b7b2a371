package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/internal/s3kit"
)

// Attachments is an attachment store in a bucket of an S3-compatible
// service. It is safe for concurrent use, also by several processes
// sharing the bucket.
type Attachments struct {
	client *minio.Client
	bucket string
	prefix string
	max    int64
}

// Config configures an Attachments store. The zero value is the
// default.
type Config struct {
	// Prefix is where in the bucket the attachments are kept: "" means
	// "attachments/", and "/" the bucket's root. Another prefix must be a
	// relative name ending in "/", without empty, "." or ".." segments.
	Prefix string
	// MaxSize is the largest attachment Get reads; 0 means 64 MiB. A
	// larger object is refused with harness.CodeTooLarge instead of being
	// read into memory. A negative size is an error of NewAttachments.
	MaxSize int64
}

// NewAttachments returns a store keeping attachments in bucket, which
// must exist.
func NewAttachments(ctx context.Context, client *minio.Client, bucket string, cfg Config) (*Attachments, error) {
	if client == nil {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: "attachments/s3: NewAttachments needs a client (minio.New)"}
	}
	prefix, err := s3kit.Prefix(pkg, cfg.Prefix, "attachments/")
	if err != nil {
		return nil, err
	}
	a := &Attachments{client: client, bucket: bucket, prefix: prefix, max: 64 << 20}
	switch {
	case cfg.MaxSize < 0:
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf("attachments/s3: Config.MaxSize is %d: the size must be positive (0 means the default)", cfg.MaxSize)}
	case cfg.MaxSize > 0:
		a.max = cfg.MaxSize
	}
	if err := s3kit.CheckBucket(ctx, client, pkg, bucket); err != nil {
		return nil, err
	}
	return a, nil
}

// pkg names the package in its errors.
const pkg = "attachments/s3"

func ioErr(what string, err error) error { return s3kit.IOError(pkg, what, err) }

func (a *Attachments) key(digest string) string {
	return a.prefix + "sha256/" + strings.TrimPrefix(digest, "sha256:")
}

// Put implements tools.AttachmentStore.
func (a *Attachments) Put(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	digest := attdigest.Of(data)
	key := a.key(digest)
	if info, err := a.client.StatObject(ctx, a.bucket, key, minio.StatObjectOptions{}); err == nil && info.Size == int64(len(data)) {
		return digest, nil // stored already; Get verifies what it reads
	} else if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", ioErr("storing attachment "+digest, err)
	}
	// The upload is one request whose MD5 the service verifies: an object
	// is either whole or absent.
	_, err := a.client.PutObject(ctx, a.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
		ContentType:      "application/octet-stream",
		DisableMultipart: true,
		SendContentMd5:   true,
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", ioErr("storing attachment "+digest, err)
	}
	return digest, nil
}

// Get implements tools.AttachmentStore and model.ImageSource.
func (a *Attachments) Get(ctx context.Context, digest string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !attdigest.Valid(digest) {
		return nil, &harness.Error{Code: harness.CodeInvalidDigest, Message: fmt.Sprintf(
			"attachments/s3: invalid attachment digest %q (want \"sha256:\" and 64 lowercase hex digits)", digest)}
	}
	obj, err := a.client.GetObject(ctx, a.bucket, a.key(digest), minio.GetObjectOptions{})
	if err != nil {
		return nil, a.getErr(ctx, digest, err)
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		return nil, a.getErr(ctx, digest, err)
	}
	if info.Size > a.max {
		return nil, &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf(
			"attachments/s3: attachment %s is %d bytes, more than the store reads (%d)", digest, info.Size, a.max)}
	}
	data, err := io.ReadAll(io.LimitReader(obj, a.max+1))
	if err != nil {
		return nil, a.getErr(ctx, digest, err)
	}
	if got := attdigest.Of(data); got != digest {
		return nil, &harness.Error{Code: harness.CodeCorruptAttachment, Message: fmt.Sprintf(
			"attachments/s3: stored attachment %s holds bytes hashing to %s", digest, got)}
	}
	return data, nil
}

func (a *Attachments) getErr(ctx context.Context, digest string, err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return &harness.Error{Code: harness.CodeNotFound, Message: "attachments/s3: no attachment " + digest}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return ioErr("reading attachment "+digest, err)
}
