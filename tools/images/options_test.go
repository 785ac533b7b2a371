package images_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/images"
)

func TestOptionsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct {
		opt  images.Option
		want string
	}{
		{images.WithLimits(images.Limits{MaxBytes: -1}), "WithLimits"},
		{images.WithLimits(images.Limits{LongEdge: -2048}), "must not be negative"},
		{images.WithLimits(images.Limits{ConcurrentDecodes: -1}), "ConcurrentDecodes:-1"},
	} {
		_, err := tools.NewRegistry(images.ReadImage(tc.opt))
		require.ErrorIs(t, err, harness.CodeInvalidOption, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := tools.NewRegistry(images.ReadImage(images.WithLimits(images.Limits{ConcurrentDecodes: 0})))
	assert.NoError(t, err, "zero keeps the defaults")
	assert.Contains(t, images.ReadImage(images.WithLimits(images.Limits{MaxBytes: 5 << 20})).Spec().Description, "5.0 MiB",
		"the description states the limit in force")
}
