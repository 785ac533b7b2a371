package openai

import (
	"github.com/go-harness/harness/internal/sse"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

func TestParseProviderError(t *testing.T) {
	for _, tc := range []struct {
		body string
		want providerError
	}{
		{`{"error":{"message":"m","type":"t","code":"c","param":null}}`, providerError{message: "m", typ: "t", code: "c"}},
		{`{"error":{"message":"m","code":429}}`, providerError{message: "m", code: "429", status: 429}},
		{`{"error":"just text"}`, providerError{message: "just text"}},
		{`{"message":"top level"}`, providerError{message: "top level"}},
		{`{"detail":"fastapi style"}`, providerError{message: "fastapi style"}},
		{`not json at all`, providerError{message: "not json at all"}},
		{`<html>gateway</html>`, providerError{}},
		{``, providerError{}},
		{`[1,2]`, providerError{message: "[1,2]"}},
	} {
		assert.Equal(t, tc.want, parseProviderError([]byte(tc.body)), tc.body)
	}
	long := `{"error":{"message":"` + strings.Repeat("é", 5000) + `"}}`
	got := parseProviderError([]byte(long))
	assert.LessOrEqual(t, len(got.message), maxMessage)
	assert.True(t, utf8.ValidString(got.message))
}

func FuzzParseProviderError(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"This model's maximum context length is 10 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`,
		`{"error":"x"}`, `{"error":{"code":402}}`, `{"detail":"d"}`, `plain`, `<html>`, `{"error":null}`, `{"error":{"message":5}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pe := parseProviderError(body)
		if len(pe.message) > maxMessage {
			t.Fatalf("message of %d bytes", len(pe.message))
		}
		for _, status := range []int{400, 402, 429, 500} {
			me := classifyHTTP(status, nil, body)
			if me.code == "" || me.message == "" {
				t.Fatalf("unclassified: %+v", me)
			}
		}
		if me := classifyEvent(body); me.code == "" || me.message == "" {
			t.Fatalf("unclassified event: %+v", me)
		}
	})
}

// FuzzStreamDecoder feeds arbitrary bytes to the event-stream reader and
// the chunk decoder: they must not panic, must end, and must yield only
// well-formed chunks; a failure is a model error with a code.
func FuzzStreamDecoder(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		events := sse.NewReader(strings.NewReader(string(body)))
		var a answer
		var asm model.Assembler
		emit := func(c model.Chunk) bool {
			switch c.Type {
			case model.ChunkText, model.ChunkReasoning:
				require.NotEmpty(t, c.Text)
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
			if ev.Done {
				break
			}
			if err := a.event(ev, emit); err != nil {
				var he *harness.Error
				require.ErrorAs(t, err, &he)
				require.NotEmpty(t, he.Code)
				break
			}
		}
		_ = asm.Message()
		if a.usage != nil {
			require.GreaterOrEqual(t, a.usage.OutputTokens, a.usage.ReasoningTokens)
		}
	})
}
