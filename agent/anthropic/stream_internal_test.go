package anthropic

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/sse"
)

// FuzzStreamDecoder: any event stream is read without a panic into
// well-formed chunks (a known type; text and reasoning that say
// something; tool calls at indices already opened), or into a model
// error with a code.
func FuzzStreamDecoder(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	f.Add([]byte(`data: {"type":"content_block_delta","index":5,"delta":{"type":"input_json_delta","partial_json":"{"}}` + "\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		events := sse.NewReader(strings.NewReader(string(body)))
		var a answer
		var asm model.Assembler
		emit := func(c model.Chunk) bool {
			switch c.Type {
			case model.ChunkText:
				require.NotEmpty(t, c.Text)
			case model.ChunkReasoning:
				require.True(t, c.Text != "" || c.Signature != "", "%+v", c)
				if c.Redacted {
					require.Empty(t, c.Text)
				}
			case model.ChunkToolCall:
				require.GreaterOrEqual(t, c.ToolCall.Index, 0)
				require.Less(t, c.ToolCall.Index, a.nextCall)
			default:
				t.Fatalf("unexpected chunk type %d", c.Type)
			}
			asm.Add(c)
			return true
		}
		for range len(body) + 2 {
			ev, err := events.Next()
			if err != nil {
				require.ErrorIs(t, err, io.EOF)
				break
			}
			if err := a.event(ev, emit); err != nil {
				var he *harness.Error
				require.True(t, errors.As(err, &he))
				require.NotEmpty(t, he.Code)
				break
			}
			if a.done {
				break
			}
		}
		_ = asm.Message()
		if a.usage != nil {
			u := a.usage.harness()
			require.GreaterOrEqual(t, u.InputTokens, u.CacheHitTokens+u.CacheMissTokens-u.InputTokens)
			require.GreaterOrEqual(t, u.OutputTokens, u.ReasoningTokens)
			require.GreaterOrEqual(t, u.CacheMissTokens, u.CacheWriteTokens)
		}
	})
}

// FuzzParseProviderError: any error body gives a bounded message.
func FuzzParseProviderError(f *testing.F) {
	f.Add([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`))
	f.Add([]byte(`{"error":"text"}`))
	f.Add([]byte(`<html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		pe := parseProviderError(body)
		require.LessOrEqual(t, len(pe.message), maxMessage)
		f := classifyEvent(body)
		require.NotEmpty(t, f.code)
	})
}
