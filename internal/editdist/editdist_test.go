package editdist

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"read", "read", 0}, {"reed", "read", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"Read", "read", 1}} {
		assert.Equal(t, c.d, Distance(c.a, c.b), "%q %q", c.a, c.b)
		assert.Equal(t, c.d, Distance(c.b, c.a), "symmetric")
	}
	long := strings.Repeat("x", MaxLen+1)
	assert.Equal(t, 0, Distance(long, long))
	assert.Equal(t, Far, Distance(long, long+"y"))
}
