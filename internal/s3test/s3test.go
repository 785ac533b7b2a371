// Package s3test connects tests to the S3-compatible server .ci/run
// starts (HARNESS_S3_ENDPOINT, HARNESS_S3_ACCESS_KEY and
// HARNESS_S3_SECRET_KEY) and gives each test a bucket of its own. A test
// without a server skips with one line saying so.
//
// It imports the MinIO client and testify only.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"
)

// EndpointEnv names the server's host:port.
const EndpointEnv = "HARNESS_S3_ENDPOINT"

// Client returns a client of the test server, or skips the test.
func Client(t testing.TB) *minio.Client {
	t.Helper()
	ep := os.Getenv(EndpointEnv)
	if ep == "" {
		t.Skip(EndpointEnv + " is not set: no S3-compatible server to test against (.ci/run starts one)")
	}
	c, err := minio.New(ep, &minio.Options{
		Creds:  credentials.NewStaticV4(os.Getenv("HARNESS_S3_ACCESS_KEY"), os.Getenv("HARNESS_S3_SECRET_KEY"), ""),
		Secure: false,
	})
	require.NoError(t, err)
	return c
}

// Bucket creates an empty bucket for the test, removed with all its
// objects when the test ends, and returns its name.
func Bucket(t testing.TB, c *minio.Client) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t-" + hex.EncodeToString(b[:])
	require.NoError(t, c.MakeBucket(context.Background(), name, minio.MakeBucketOptions{}))
	t.Cleanup(func() {
		ctx := context.Background()
		objs := c.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true})
		for e := range c.RemoveObjects(ctx, name, objs, minio.RemoveObjectsOptions{}) {
			t.Logf("removing %s: %v", e.ObjectName, e.Err)
		}
		_ = c.RemoveBucket(ctx, name)
	})
	return name
}
