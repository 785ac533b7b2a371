package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// envOf returns a getenv over "KEY=value" pairs; nothing else is set.
func envOf(pairs ...string) func(string) string {
	m := map[string]string{}
	for _, kv := range pairs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes and reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// jsonLines parses the JSON view's output, one object per line; any line
// that does not parse fails the test.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for i, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "line %d is not JSON: %q", i+1, l)
		require.NotEmpty(t, m["type"], "line %d has no type: %q", i+1, l)
		lines = append(lines, m)
	}
	return lines
}
