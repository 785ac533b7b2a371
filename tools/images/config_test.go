package images_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/images"
)

func TestConfigRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		cfg  images.Config
		want string
	}{
		{images.Config{Limits: images.Limits{MaxBytes: -1}}, "images: Config"},
		{images.Config{Limits: images.Limits{LongEdge: -2048}}, "must not be negative"},
		{images.Config{ConcurrentDecodes: -1}, "ConcurrentDecodes:-1"},
	} {
		_, err := tools.NewRegistry(images.ReadImage(tc.cfg))
		require.ErrorIs(t, err, harness.CodeInvalidOption, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := tools.NewRegistry(images.ReadImage(images.Config{}))
	assert.NoError(t, err, "zero keeps the defaults")
	assert.Contains(t, images.ReadImage(images.Config{Limits: images.Limits{MaxBytes: 5 << 20}}).Spec().Description, "5.0 MiB",
		"the description states the limit in force")
}
