package storekit

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTitle(t *testing.T) {
	long := strings.Repeat("é", 100)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  fix the build  ", "fix the build"},
		{"\n\n  first line\nsecond", "first line"},
		{long, strings.Repeat("é", 79) + "…"},
		{strings.Repeat("a", 80), strings.Repeat("a", 80)},
	} {
		assert.Equal(t, tc.want, Title(tc.in), "%q", tc.in)
	}
}

func TestNewID(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600))
	a, b := NewID(at), NewID(at)
	assert.Regexp(t, `^20260304-040607-[0-9a-f]{12}$`, a)
	assert.NotEqual(t, a, b)
}
