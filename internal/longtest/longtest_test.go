package longtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPick(t *testing.T) {
	tests := []struct {
		env  string
		want int
	}{
		{"", 3},
		{"0", 3},
		{"true", 3},
		{"1", 300},
	}
	for _, tt := range tests {
		t.Run("env="+tt.env, func(t *testing.T) {
			t.Setenv(Env, tt.env)
			assert.Equal(t, tt.want, Pick(3, 300))
			assert.Equal(t, tt.env == "1", Enabled())
		})
	}
}
