package openai_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

type lookupIn struct {
	Key string `json:"key" jsonschema:"the key to look up"`
}

// lookupTool answers "value of <key>" and records the keys it saw.
func lookupTool(seen *[]string, mu *sync.Mutex) tools.Tool {
	return tools.Define(tools.Spec{Name: "lookup", Description: "Look a key up.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in lookupIn) (*harness.ToolResult, error) {
			mu.Lock()
			*seen = append(*seen, in.Key)
			mu.Unlock()
			return harness.TextResult("value of " + in.Key), nil
		})
}

// runTurn runs one turn and returns the text it streamed, its usage
// events and its end.
func runTurn(t *testing.T, loop *agent.Loop, prompt string) (string, []*agent.ModelUsage, *agent.TurnEnd) {
	t.Helper()
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	var text strings.Builder
	var usages []*agent.ModelUsage
	var end *agent.TurnEnd
	for ev, err := range s.Run(context.Background(), prompt) {
		switch e := ev.(type) {
		case *agent.TextDelta:
			text.WriteString(e.Text)
		case *agent.ModelUsage:
			usages = append(usages, e)
		case *agent.TurnEnd:
			end = e
			require.NoError(t, err)
		}
	}
	require.NotNil(t, end)
	return text.String(), usages, end
}

// The real agent loop drives the model over HTTP for three steps: one
// tool call, two parallel calls split over many chunks, then an answer.
// Every later request carries the earlier assistant turns with content
// "" and their reasoning_content.
func TestToolLoopThroughAgent(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		name := "stream"
		if !streaming {
			name = "non-stream"
		}
		t.Run(name, func(t *testing.T) {
			leakcheck.Check(t)
			var p *provider
			if streaming {
				p = newProvider(t,
					sse(role(), reasoning("I should "), reasoning("look."),
						toolDelta(0, "call_a", "lookup", ""), toolDelta(0, "", "", `{"ke`), toolDelta(0, "", "", `y":"alpha"}`),
						finish("tool_calls"), usage(100, 20, 80, 20, 5)),
					sse(role(), reasoning("Two more."),
						toolDelta(0, "call_b", "lookup", `{"key":`), toolDelta(1, "call_c", "lookup", `{"ke`),
						toolDelta(0, "", "", `"beta"}`), toolDelta(1, "", "", `y":"gamma"}`),
						finish("tool_calls"), usage(200, 30, 150, 50, 7)),
					sse(role(), reasoning("Done."), text("alpha=1, "), text("beta=2"), finish("stop"), usage(300, 10, 250, 50, 2)),
				)
			} else {
				p = newProvider(t,
					jsonReply(completion("I should look.", "", "tool_calls", [][3]string{{"call_a", "lookup", `{"key":"alpha"}`}})),
					jsonReply(completion("Two more.", "", "tool_calls", [][3]string{{"call_b", "lookup", `{"key":"beta"}`}, {"call_c", "lookup", `{"key":"gamma"}`}})),
					jsonReply(completion("Done.", "alpha=1, beta=2", "stop", nil)),
				)
			}
			var seen []string
			var mu sync.Mutex
			loop, err := agent.New(
				agent.WithModel(p.model(openai.Config{DisableStreaming: !streaming, Dialect: openai.DialectDeepSeek})),
				agent.WithTools(lookupTool(&seen, &mu)),
				agent.WithSystemPrompt("You look things up."),
			)
			require.NoError(t, err)
			t.Cleanup(func() { loop.Close() })

			answer, usages, end := runTurn(t, loop, "What are alpha and beta?")
			assert.Equal(t, "completed", end.Reason)
			assert.Equal(t, 3, end.Steps)
			assert.Equal(t, "alpha=1, beta=2", answer)
			assert.ElementsMatch(t, []string{"alpha", "beta", "gamma"}, seen)

			reqs := p.Requests()
			require.Len(t, reqs, 3)
			for _, r := range reqs {
				body := r.JSON(t)
				assert.Equal(t, "deepseek-flash", body["model"])
				if streaming {
					assert.Equal(t, true, body["stream"])
					assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
				} else {
					assert.NotContains(t, body, "stream_options")
				}
			}

			// Request 2: system, user, the first assistant turn, its result.
			m2 := reqs[1].Messages(t)
			require.Len(t, m2, 4)
			assert.Equal(t, map[string]any{"role": "system", "content": "You look things up."}, m2[0])
			assert.Equal(t, map[string]any{"role": "user", "content": "What are alpha and beta?"}, m2[1])
			assert.Equal(t, "assistant", m2[2]["role"])
			assert.Equal(t, "", m2[2]["content"], "a tool-call-only turn has content \"\"")
			assert.Equal(t, "I should look.", m2[2]["reasoning_content"])
			assert.Equal(t, []any{map[string]any{"id": "call_a", "type": "function",
				"function": map[string]any{"name": "lookup", "arguments": `{"key":"alpha"}`}}}, m2[2]["tool_calls"])
			assert.Equal(t, map[string]any{"role": "tool", "tool_call_id": "call_a", "content": "value of alpha"}, m2[3])
			assert.Contains(t, string(reqs[1].Body), `"content":""`, "content is on the wire as an empty string")

			// Request 3 still carries the first turn's reasoning, and the
			// parallel calls in order with their results.
			m3 := reqs[2].Messages(t)
			require.Len(t, m3, 7)
			assert.Equal(t, m2, m3[:4], "the history prefix is sent unchanged")
			assert.Equal(t, "", m3[4]["content"])
			assert.Equal(t, "Two more.", m3[4]["reasoning_content"])
			calls := m3[4]["tool_calls"].([]any)
			require.Len(t, calls, 2)
			assert.Equal(t, map[string]any{"name": "lookup", "arguments": `{"key":"beta"}`}, calls[0].(map[string]any)["function"])
			assert.Equal(t, map[string]any{"name": "lookup", "arguments": `{"key":"gamma"}`}, calls[1].(map[string]any)["function"])
			assert.Equal(t, "call_b", m3[5]["tool_call_id"])
			assert.Equal(t, "value of beta", m3[5]["content"])
			assert.Equal(t, "call_c", m3[6]["tool_call_id"])
			assert.Equal(t, "value of gamma", m3[6]["content"])
			// Byte-stable prefix: request 3 starts with request 2's messages.
			assert.True(t, strings.HasPrefix(messagesJSON(t, reqs[2]), strings.TrimSuffix(messagesJSON(t, reqs[1]), "]")),
				"request 3's messages extend request 2's byte for byte")

			require.Len(t, usages, 3)
			if streaming {
				assert.Equal(t, int64(80), usages[0].Usage.CacheHitTokens)
				assert.Equal(t, int64(20), usages[0].Usage.CacheMissTokens)
				assert.Equal(t, int64(5), usages[0].Usage.ReasoningTokens)
				assert.Equal(t, int64(300), usages[2].Usage.InputTokens)
			}
		})
	}
}

// messagesJSON returns the raw bytes of a request's "messages" array.
func messagesJSON(t *testing.T, c captured) string {
	t.Helper()
	s := string(c.Body)
	i := strings.Index(s, `"messages":`)
	require.GreaterOrEqual(t, i, 0)
	s = s[i+len(`"messages":`):]
	depth := 0
	inStr, esc := false, false
	for j, r := range s {
		switch {
		case esc:
			esc = false
		case inStr && r == '\\':
			esc = true
		case r == '"':
			inStr = !inStr
		case inStr:
		case r == '[' || r == '{':
			depth++
		case r == ']' || r == '}':
			depth--
			if depth == 0 {
				return s[:j+1]
			}
		}
	}
	t.Fatal("unterminated messages array")
	return ""
}
