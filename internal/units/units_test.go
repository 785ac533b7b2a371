package units

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBytes(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{1, "1 byte"},
		{2, "2 bytes"},
		{1023, "1023 bytes"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{50 << 10, "50.0 KiB"},
		{1<<20 - 1, "1024.0 KiB"},
		{1 << 20, "1.0 MiB"},
		{20 << 20, "20.0 MiB"},
		{3 << 30, "3.0 GiB"},
		{5 << 40, "5.0 TiB"},
		{math.MaxInt64, "8.0 EiB"},
		{-1, "-1 byte"},
		{-2048, "-2.0 KiB"},
		{math.MinInt64, "-8.0 EiB"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Bytes(c.n), "Bytes(%d)", c.n)
	}
}

func TestPlural(t *testing.T) {
	assert.Equal(t, "0 lines", Plural(0, "line", "lines"))
	assert.Equal(t, "1 line", Plural(1, "line", "lines"))
	assert.Equal(t, "2 matches", Plural(2, "match", "matches"))
	assert.Equal(t, "-1 line", Plural(-1, "line", "lines"))
	assert.Equal(t, "1 byte", Plural(int64(1), "byte", "bytes"))
	assert.Equal(t, "9000000000 bytes", Plural(int64(9e9), "byte", "bytes"))
}

// FuzzBytes checks that every count formats as a number and a unit that
// read back to the count within the rounding of one decimal.
func FuzzBytes(f *testing.F) {
	for _, n := range []int64{0, 1, 1023, 1024, 1<<20 - 1, 1 << 30, math.MaxInt64, -5} {
		f.Add(n)
	}
	mult := map[string]float64{"byte": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
		"TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60}
	f.Fuzz(func(t *testing.T, n int64) {
		s := Bytes(n)
		num, unit, ok := strings.Cut(strings.TrimPrefix(s, "-"), " ")
		require.True(t, ok, "%q has no unit", s)
		m, ok := mult[unit]
		require.True(t, ok, "%q has an unknown unit", s)
		v, err := strconv.ParseFloat(num, 64)
		require.NoError(t, err, "%q", s)
		abs := math.Abs(float64(n))
		if m == 1 {
			require.Equal(t, abs, v, "%q", s)
			require.Equal(t, abs == 1, unit == "byte", "%q", s)
			return
		}
		require.InDelta(t, abs, v*m, 0.05*m+1, "%q", s)
		require.GreaterOrEqual(t, abs, m, "%q: below its unit", s)
	})
}
