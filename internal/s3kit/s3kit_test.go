package s3kit

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

func TestPrefixError(t *testing.T) {
	for _, p := range []string{"", "a/", "spill/", "a/b-c/", "a.b/"} {
		assert.NoError(t, PrefixError("x/s3", p), "%q", p)
	}
	for _, p := range []string{"a", "/a/", "/", "a//", "a//b/", "./", "a/../", "a/./", "../"} {
		err := PrefixError("x/s3", p)
		require.ErrorIs(t, err, harness.CodeInvalidOption, "%q", p)
		assert.Contains(t, err.Error(), fmt.Sprintf("x/s3: WithPrefix(%q)", p))
	}
}

func TestApply(t *testing.T) {
	type opt func(*[]int) error
	add := func(n int) opt { return func(s *[]int) error { *s = append(*s, n); return nil } }
	var got []int
	require.NoError(t, Apply(&got, []opt{add(1), nil, add(2)}))
	assert.Equal(t, []int{1, 2}, got)
	stop := errors.New("stop")
	got = nil
	err := Apply(&got, []opt{add(1), func(*[]int) error { return stop }, add(3)})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, []int{1}, got, "options after a failing one are not applied")
}

func TestIOError(t *testing.T) {
	err := IOError("x/s3", "saving output", errors.New("connection reset"))
	require.ErrorIs(t, err, harness.CodeIO)
	assert.Equal(t, "x/s3: saving output: connection reset", err.Error())
	err = IOError("x/s3", "saving output", fmt.Errorf("put: %w", context.DeadlineExceeded))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, harness.CodeIO)
	assert.Equal(t, "x/s3: saving output: put: context deadline exceeded", err.Error())
}
