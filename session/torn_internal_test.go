package session

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTruncatedJSON(t *testing.T) {
	full := `{"seq":3,"time":"2026-01-01T00:00:00Z","type":"reminder","data":{"source":"x","text":"a\"b"}}`
	for _, n := range []int{1, 10, 40, len(full) - 1} {
		var e Event
		err := json.Unmarshal([]byte(full[:n]), &e)
		assert.True(t, truncatedJSON(err, []byte(full[:n])), "prefix of %d bytes is torn: %v", n, err)
	}
	for _, bad := range []string{`{"seq":3,,}`, `{"seq":3} x`, `nonsense`} {
		var e Event
		err := json.Unmarshal([]byte(bad), &e)
		assert.Error(t, err)
		assert.False(t, truncatedJSON(err, []byte(bad)), "%q is corrupt, not torn", bad)
	}
}
