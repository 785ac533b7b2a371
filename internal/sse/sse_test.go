package sse_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/sse"
)

type ev struct {
	name, data string
	done       bool
}

func all(t testing.TB, stream string) ([]ev, error) {
	t.Helper()
	r := sse.NewReader(strings.NewReader(stream))
	var out []ev
	for {
		e, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, ev{e.Name, string(e.Data), e.Done})
	}
}

func TestReader(t *testing.T) {
	got, err := all(t, ": keep-alive\n\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\n"+
		"event: ping\ndata: {\"type\": \"ping\"}\n\n\n\n"+
		"data:{\"b\":\ndata: 2}\n\n"+
		"{\"bare\":true}\n"+
		"event: x\n\n"+
		"id: 7\nretry: 10\ndata: [DONE]\n\n"+
		"data: "+strings.Repeat("y", 20000)+"\n\n"+
		"event: last\ndata: no blank line")
	require.NoError(t, err)
	assert.Equal(t, []ev{
		{"message_start", `{"a":1}`, false},
		{"ping", `{"type": "ping"}`, false},
		{"", "{\"b\":\n2}", false},
		{"", `{"bare":true}`, false},
		{"", "[DONE]", true},
		{"", strings.Repeat("y", 20000), false},
		{"last", "no blank line", false},
	}, got)
}

// FuzzReader: any stream is read to its end without a panic, and a
// stream re-written from the events read gives the same events again.
func FuzzReader(f *testing.F) {
	f.Add("event: message_start\ndata: {}\n\n")
	f.Add(": keep-alive\n\ndata: [DONE]\n\n")
	f.Add("data: a\r\ndata: b\r\n\r\n{\"x\":1}\nevent: e")
	f.Fuzz(func(t *testing.T, stream string) {
		got, err := all(t, stream)
		require.NoError(t, err)
		var b strings.Builder
		for _, e := range got {
			if e.name != "" {
				b.WriteString("event: " + e.name + "\n")
			}
			for _, line := range strings.Split(e.data, "\n") {
				if strings.HasSuffix(line, "\r") {
					return // a line ending in CR cannot be written back as it was
				}
				b.WriteString("data: " + line + "\n")
			}
			b.WriteString("\n")
		}
		again, err := all(t, b.String())
		require.NoError(t, err)
		for i := range again {
			again[i].done = got[i].done
		}
		require.Equal(t, got, again, "re-written: %q", b.String())
	})
}
