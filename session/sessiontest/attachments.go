package sessiontest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
)

// attachmentStore is the contract of an attachment store, as
// tools.AttachmentStore states it; this package does not depend on tools.
type attachmentStore interface {
	Put(ctx context.Context, data []byte) (digest string, err error)
	Get(ctx context.Context, digest string) ([]byte, error)
}

// TestAttachments runs the conformance suite for an attachment store (a
// tools.AttachmentStore). newStore must return an empty store each time
// it is called.
//
//	func TestMyAttachments(t *testing.T) {
//		sessiontest.TestAttachments(t, func(t *testing.T) tools.AttachmentStore { return newMyStore(t) })
//	}
func TestAttachments[S attachmentStore](t *testing.T, newStore func(t *testing.T) S) {
	t.Run("RoundTrip", func(t *testing.T) { testAttachRoundTrip(t, newStore(t)) })
	t.Run("Deduplicates", func(t *testing.T) { testAttachDedup(t, newStore(t)) })
	t.Run("NoAliasing", func(t *testing.T) { testAttachAliasing(t, newStore(t)) })
	t.Run("NotFound", func(t *testing.T) { testAttachNotFound(t, newStore(t)) })
	t.Run("InvalidDigests", func(t *testing.T) { testAttachInvalid(t, newStore(t)) })
	t.Run("Concurrent", func(t *testing.T) { testAttachConcurrent(t, newStore(t)) })
	t.Run("CancelledContext", func(t *testing.T) { testAttachCancelled(t, newStore(t)) })
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

func testAttachRoundTrip(t *testing.T, s attachmentStore) {
	big := bytes.Repeat([]byte("\x89PNG\r\n\x1a\n\x00\xff"), 100_000)
	for _, data := range [][]byte{[]byte("a"), {}, big, {0, 1, 2, 255}} {
		d, err := s.Put(ctx(), data)
		require.NoError(t, err)
		assert.Equal(t, sha(data), d, "the digest is sha256 of the stored bytes")
		assert.True(t, attdigest.Valid(d))
		got, err := s.Get(ctx(), d)
		require.NoError(t, err)
		assert.Equal(t, len(data), len(got))
		assert.True(t, bytes.Equal(data, got), "Get returns exactly what Put stored")
	}
}

func testAttachDedup(t *testing.T, s attachmentStore) {
	a, err := s.Put(ctx(), []byte("same bytes"))
	require.NoError(t, err)
	b, err := s.Put(ctx(), []byte("same bytes"))
	require.NoError(t, err)
	assert.Equal(t, a, b)
	c, err := s.Put(ctx(), []byte("other bytes"))
	require.NoError(t, err)
	assert.NotEqual(t, a, c)
	for d, want := range map[string]string{a: "same bytes", c: "other bytes"} {
		got, err := s.Get(ctx(), d)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
}

func testAttachAliasing(t *testing.T, s attachmentStore) {
	data := []byte("mutable")
	d, err := s.Put(ctx(), data)
	require.NoError(t, err)
	data[0] = 'X'
	got, err := s.Get(ctx(), d)
	require.NoError(t, err)
	assert.Equal(t, "mutable", string(got), "changing the caller's slice after Put must not change the stored bytes")
	got[0] = 'Y'
	again, err := s.Get(ctx(), d)
	require.NoError(t, err)
	assert.Equal(t, "mutable", string(again), "changing a returned slice must not change the stored bytes")
}

func testAttachNotFound(t *testing.T, s attachmentStore) {
	_, err := s.Get(ctx(), sha([]byte("never stored")))
	require.Error(t, err)
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.NotErrorIs(t, err, harness.CodeInvalidDigest)
}

func testAttachInvalid(t *testing.T, s attachmentStore) {
	valid := sha([]byte("x"))
	_, err := s.Put(ctx(), []byte("x"))
	require.NoError(t, err)
	for _, d := range []string{
		"",
		"sha256:",
		valid[len("sha256:"):],          // no algorithm
		"md5:" + valid[len("sha256:"):], // wrong algorithm
		"SHA256:" + valid[len("sha256:"):],
		"sha256:" + string(bytes.ToUpper([]byte(valid[len("sha256:"):]))),
		valid + "0",
		valid[:len(valid)-1],
		valid[:len(valid)-2] + "/x",
		"sha256:../../../../etc/passwd",
		"sha256:" + string(bytes.Repeat([]byte("."), 64)),
		"sha256:" + string(bytes.Repeat([]byte("g"), 64)),
		valid + "\x00",
	} {
		_, err := s.Get(ctx(), d)
		assert.ErrorIs(t, err, harness.CodeInvalidDigest, "digest %q", d)
	}
}

func testAttachConcurrent(t *testing.T, s attachmentStore) {
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		for range 4 {
			wg.Go(func() {
				data := []byte(fmt.Sprintf("attachment %d", i%3))
				d, err := s.Put(ctx(), data)
				if err != nil {
					errs <- err
					return
				}
				got, err := s.Get(ctx(), d)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, data) {
					errs <- fmt.Errorf("got %q, want %q", got, data)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testAttachCancelled(t *testing.T, s attachmentStore) {
	c, cancel := context.WithCancel(ctx())
	cancel()
	_, err := s.Put(c, []byte("late"))
	assert.ErrorIs(t, err, context.Canceled)
	_, err = s.Get(ctx(), sha([]byte("late")))
	assert.ErrorIs(t, err, harness.CodeNotFound, "a cancelled Put stores nothing")
	d, err := s.Put(ctx(), []byte("early"))
	require.NoError(t, err)
	_, err = s.Get(c, d)
	assert.ErrorIs(t, err, context.Canceled)
}
