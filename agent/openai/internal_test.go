package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
)

// Keep-alive bytes count as signs of life: every read that brings data,
// comment lines and blank lines included, re-arms the watchdog.
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

func TestWatchdogStopsAndReArms(t *testing.T) {
	fired := make(chan error, 1)
	w := &watchdog{idle: time.Hour, cancel: func(err error) { fired <- err }}
	w.touch() // not armed yet: nothing happens
	w.start()
	w.touch()
	w.stop()
	select {
	case err := <-fired:
		t.Fatalf("a stopped watchdog fired: %v", err)
	default:
	}
	var nilDog *watchdog
	nilDog.start()
	nilDog.touch()
	nilDog.stop()
}

func TestRetryAfter(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	assert.Equal(t, 250*time.Millisecond, retryAfter(h("Retry-After-Ms", "250", "Retry-After", "9")))
	assert.Equal(t, 1500*time.Millisecond, retryAfter(h("Retry-After", "1.5")))
	assert.Equal(t, time.Duration(0), retryAfter(h("Retry-After", "-3")))
	assert.Equal(t, time.Duration(0), retryAfter(h("Retry-After", "soon")))
	assert.Equal(t, time.Duration(0), retryAfter(nil))
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	d := retryAfter(h("Retry-After", future))
	assert.Greater(t, d, 50*time.Minute)
	assert.LessOrEqual(t, d, time.Hour)
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

// FuzzAnswerChunk feeds decoded chunks to the answer reader: it must not
// panic, must yield only well-formed chunks, and the text it yields must
// be the deltas' content in order.
func FuzzAnswerChunk(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":"hi","reasoning_content":"r"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"n","arguments":"{"}},{"index":0,"id":"b","function":{"arguments":"}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"prompt_cache_hit_tokens":2,"prompt_cache_miss_tokens":1}}`,
		`{"choices":[{"index":1,"delta":{"content":"ignored"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"alt","content":null}}]}`,
	} {
		f.Add([]byte(s), []byte(`{"choices":[{"index":0,"delta":{"content":"more"},"finish_reason":"stop"}]}`))
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var a answer
		var got []model.Chunk
		emit := func(c model.Chunk) bool { got = append(got, c); return true }
		var wantText strings.Builder
		for _, data := range [][]byte{first, second} {
			var c oai.ChatCompletionChunk
			if json.Unmarshal(data, &c) != nil {
				continue
			}
			for _, ch := range c.Choices {
				if ch.Index == 0 {
					wantText.WriteString(ch.Delta.Content)
					wantText.WriteString(ch.Delta.Refusal)
				}
			}
			require.True(t, a.chunk(&c, emit))
		}
		var asm agent.Assembler
		var text strings.Builder
		for _, c := range got {
			switch c.Type {
			case model.ChunkText:
				require.NotEmpty(t, c.Text)
				text.WriteString(c.Text)
			case model.ChunkReasoning:
				require.NotEmpty(t, c.Text)
			case model.ChunkToolCall:
				require.GreaterOrEqual(t, c.ToolCall.Index, 0)
				require.Less(t, c.ToolCall.Index, a.nextCall)
			default:
				t.Fatalf("unexpected chunk type %d", c.Type)
			}
			asm.Add(c)
		}
		require.Equal(t, wantText.String(), text.String())
		_ = asm.Message()
	})
}
