package s3_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/internal/s3test"
	"github.com/go-harness/harness/session/attachments/s3"
	"github.com/go-harness/harness/session/sessiontest"
)

func TestConformance(t *testing.T) {
	c := s3test.Client(t)
	sessiontest.TestAttachments(t, func(t *testing.T) *s3.Attachments {
		a, err := s3.NewAttachments(context.Background(), c, s3test.Bucket(t, c), s3.Config{})
		require.NoError(t, err)
		return a
	})
}

func TestContentAddressed(t *testing.T) {
	ctx := context.Background()
	c := s3test.Client(t)
	bucket := s3test.Bucket(t, c)
	a, err := s3.NewAttachments(ctx, c, bucket, s3.Config{Prefix: "img/", MaxSize: 1 << 10})
	require.NoError(t, err)
	data := []byte("\x89PNG\r\n\x1a\n fake image")
	d, err := a.Put(ctx, data)
	require.NoError(t, err)
	assert.Equal(t, attdigest.Of(data), d)
	key := "img/sha256/" + strings.TrimPrefix(d, "sha256:")
	info, err := c.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
	require.NoError(t, err, "one object named by the digest")
	assert.Equal(t, int64(len(data)), info.Size)

	// Bytes changed in the bucket are refused, never returned.
	_, err = c.PutObject(ctx, bucket, key, bytes.NewReader([]byte("tampered bytes, same length!")[:len(data)]), int64(len(data)), minio.PutObjectOptions{})
	require.NoError(t, err)
	_, err = a.Get(ctx, d)
	assert.ErrorIs(t, err, harness.CodeCorruptAttachment)

	big := bytes.Repeat([]byte("x"), 2<<10)
	db, err := a.Put(ctx, big)
	require.NoError(t, err)
	_, err = a.Get(ctx, db)
	assert.ErrorIs(t, err, harness.CodeTooLarge, "larger than MaxSize is not read into memory")

	for _, cfg := range []s3.Config{{MaxSize: -1}, {Prefix: "x"}, {Prefix: "../"}, {Prefix: "a//"}} {
		_, err := s3.NewAttachments(ctx, c, bucket, cfg)
		assert.ErrorIs(t, err, harness.CodeInvalidOption, "%+v", cfg)
	}
	_, err = s3.NewAttachments(ctx, c, "no-such-bucket-here", s3.Config{})
	assert.ErrorIs(t, err, harness.CodeNotFound)
}
