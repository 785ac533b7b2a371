package fs_test

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
)

func TestErrorMatching(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", fs.NewError(harness.CodeNotFound, &fs.PathError{Op: "read", Path: "/a", Err: iofs.ErrNotExist}))
	assert.ErrorIs(t, err, harness.CodeNotFound)
	assert.ErrorIs(t, err, iofs.ErrNotExist)
	assert.NotErrorIs(t, err, harness.CodeStale)
	assert.Equal(t, harness.CodeNotFound, harness.CodeOf(err))
	assert.Equal(t, "fs: read /a: not_found: file does not exist", errors.Unwrap(err).Error())

	var he *harness.Error
	require.True(t, errors.As(err, &he))
	assert.Equal(t, harness.CodeNotFound, he.Code)
	var d *fs.PathError
	require.True(t, errors.As(err, &d))
	assert.Equal(t, &fs.PathError{Op: "read", Path: "/a", Err: iofs.ErrNotExist}, d)
	assert.Equal(t, "read /a: file does not exist", d.Error())

	assert.ErrorIs(t, fs.NewError(harness.CodeExists, &fs.PathError{}), iofs.ErrExist)
	assert.ErrorIs(t, fs.NewError(harness.CodePermission, &fs.PathError{}), iofs.ErrPermission)
	assert.Equal(t, harness.CodeAborted, harness.CodeOf(context.Canceled))
	assert.Equal(t, harness.CodeNotFound, harness.CodeOf(iofs.ErrNotExist))
	assert.Equal(t, harness.Code(""), harness.CodeOf(nil))
	// Codes are the sentinels: an error value is never a target.
	assert.NotErrorIs(t, fs.NewError(harness.CodeStale, &fs.PathError{Path: "/x"}), fs.NewError(harness.CodeStale, &fs.PathError{}),
		"only codes are targets")
}

// failingReader fails every read with an error that has no code.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("x") }

func TestStorageFailureIsIO(t *testing.T) {
	_, err := fs.ScanText(context.Background(), failingReader{}, fs.Window{})
	assert.ErrorIs(t, err, harness.CodeIO, "a storage failure without a code of its own is io_error")
	assert.Equal(t, harness.CodeIO, harness.CodeOf(err))
}

func TestLedger(t *testing.T) {
	l := new(fs.Ledger)
	assert.Equal(t, fs.Precondition{Absent: true}, l.WritePrecondition("/a"), "unseen: create only")
	_, err := l.EditPrecondition("/a")
	require.ErrorIs(t, err, harness.CodeNotObserved)

	l.Observe("/a", "v1")
	assert.Equal(t, fs.Precondition{Version: "v1"}, l.WritePrecondition("/a"))
	pre, err := l.EditPrecondition("/a")
	require.NoError(t, err)
	assert.Equal(t, fs.Precondition{Version: "v1"}, pre)
	l.Observe("/a", "v2")
	v, ok := l.Version("/a")
	assert.True(t, ok)
	assert.Equal(t, "v2", v)
	assert.Equal(t, 1, l.Len())
	l.Observe("/a", "") // forgets it
	_, ok = l.Version("/a")
	assert.False(t, ok)

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				l.Observe(fmt.Sprintf("/f%d", i), fmt.Sprint(j))
				l.Version("/f0")
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 8, l.Len())
}
