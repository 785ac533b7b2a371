package openai

import (
	"encoding/json"
	"github.com/go-harness/harness/internal/assemble"
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

// Keep-alive bytes count as signs of life: every read that brings data,
// comment lines and blank lines included, re-arms the idle bound.
func TestWatchedBodyTouchesOnEveryRead(t *testing.T) {
	touches := 0
	body := &watchedBody{ReadCloser: io.NopCloser(strings.NewReader(": keep-alive\n\n\n\ndata: {}\n\n")), touch: func() { touches++ }}
	buf := make([]byte, 4)
	var got strings.Builder
	for {
		n, err := body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	assert.Equal(t, ": keep-alive\n\n\n\ndata: {}\n\n", got.String())
	assert.Equal(t, 7, touches, "one touch per read that returned bytes, none at EOF")
}

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
		var asm assemble.Assembler
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

// FuzzAppendString checks the hand-written JSON string encoder against
// encoding/json: the output is valid JSON that decodes to the input (with
// invalid UTF-8 replaced, as encoding/json does).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ tab \t nl \n", "\x00\x1f\x7f", "\u2028\u2029 <html> &", "bad \xff utf8", "日本語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendString(nil, s)
		var back string
		require.NoError(t, json.Unmarshal(enc, &back), "%q", enc)
		want, _ := json.Marshal(s)
		var wantBack string
		require.NoError(t, json.Unmarshal(want, &wantBack))
		require.Equal(t, wantBack, back)
	})
}
