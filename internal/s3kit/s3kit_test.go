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

func TestPrefix(t *testing.T) {
	for p, want := range map[string]string{"": "def/", "/": "", "a/": "a/", "spill/": "spill/", "a/b-c/": "a/b-c/", "a.b/": "a.b/"} {
		got, err := Prefix("x/s3", p, "def/")
		require.NoError(t, err, "%q", p)
		assert.Equal(t, want, got, "%q", p)
	}
	for _, p := range []string{"a", "/a/", "//", "a//", "a//b/", "./", "a/../", "a/./", "../"} {
		_, err := Prefix("x/s3", p, "def/")
		require.ErrorIs(t, err, harness.CodeInvalidOption, "%q", p)
		assert.Contains(t, err.Error(), fmt.Sprintf("x/s3: Config.Prefix is %q", p))
	}
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
