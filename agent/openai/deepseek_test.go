package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
)

// The tests of this file run the adapter against openaitest.DeepSeek, a
// fake endpoint that enforces the request rules DeepSeek's API
// documents and answers 400 as DeepSeek does when one is broken.

// deepSeek returns a model in the deepseek dialect on a fake DeepSeek
// endpoint that answers each request with ok, once per reply.
func deepSeek(t *testing.T, cfg openai.Config, replies int) (*provider, model.Model) {
	t.Helper()
	var rs []reply
	for range replies {
		rs = append(rs, openaitest.DeepSeek(sse(text(`{"ok":true}`), finish("stop"))))
	}
	p := newProvider(t, rs...)
	cfg.Dialect = openai.DialectDeepSeek
	return p, p.model(cfg)
}

func toolRequest(tools ...model.Tool) *model.Request {
	return &model.Request{Messages: []harness.Message{userText("go")}, Tools: tools}
}

var lsTool = model.Tool{Name: "ls", Description: "List.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}

// DeepSeek answers every request that forces a tool in thinking mode
// (its default) with 400, which the loop does not retry: New refuses
// the combination and says what to change, unless the host turned
// thinking off, which the request then says.
func TestDeepSeekForcedToolChoiceNeedsThinkingOff(t *testing.T) {
	for _, choice := range []string{"required", "ls"} {
		for name, thinking := range map[string]*bool{"default": nil, "on": new(true)} {
			t.Run(choice+"/thinking "+name, func(t *testing.T) {
				m, err := openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: "k", Model: "deepseek-flash",
					ToolChoice: choice, Thinking: thinking})
				assert.Nil(t, m)
				require.ErrorIs(t, err, harness.CodeInvalidOption)
				assert.ErrorContains(t, err, "thinking mode")
				assert.ErrorContains(t, err, "set Thinking to false")
			})
		}
		t.Run(choice+"/thinking off", func(t *testing.T) {
			p, m := deepSeek(t, openai.Config{ToolChoice: choice, Thinking: new(false)}, 1)
			_, err := drain(t, m, context.Background(), toolRequest(lsTool))
			require.NoError(t, err)
			body := p.Requests()[0].JSON(t)
			assert.Equal(t, map[string]any{"type": "disabled"}, body["thinking"])
			assert.NotNil(t, body["tool_choice"])
		})
	}
	// auto and none are fine in thinking mode.
	for _, choice := range []string{"auto", "none"} {
		_, m := deepSeek(t, openai.Config{ToolChoice: choice}, 1)
		_, err := drain(t, m, context.Background(), toolRequest(lsTool))
		require.NoError(t, err, choice)
	}
	// Other dialects keep their own rules.
	_, err := openai.New(openai.Config{BaseURL: "https://api.openai.com/v1", APIKey: "k", Model: "gpt-x", ToolChoice: "required"})
	assert.NoError(t, err)
}

// DeepSeek's strict mode takes only the formats email, hostname, ipv4,
// ipv6 and uuid, no length or item-count bounds, and at most 128
// functions: the local check is DeepSeek's, so a schema it refuses
// never reaches it, and one it takes goes through.
func TestDeepSeekStrictModeRules(t *testing.T) {
	closed := func(prop string) model.Tool {
		return model.Tool{Name: "bad_tool", Parameters: json.RawMessage(`{"type":"object","properties":{"v":` + prop + `},"required":["v"],"additionalProperties":false}`)}
	}
	for name, tc := range map[string]struct{ prop, want string }{
		"date":      {`{"type":"string","format":"date"}`, `format "date"`},
		"date-time": {`{"type":"string","format":"date-time"}`, `format "date-time"`},
		"duration":  {`{"type":"string","format":"duration"}`, `format "duration"`},
		"time":      {`{"type":"string","format":"time"}`, `format "time"`},
		"minItems":  {`{"type":"array","items":{"type":"string"},"minItems":1}`, `"minItems"`},
		"maxItems":  {`{"type":"array","items":{"type":"string"},"maxItems":3}`, `"maxItems"`},
		"maxLength": {`{"type":"string","maxLength":3}`, `"maxLength"`},
	} {
		t.Run(name, func(t *testing.T) {
			p, m := deepSeek(t, openai.Config{StrictTools: true}, 1)
			_, err := drain(t, m, context.Background(), toolRequest(closed(tc.prop)))
			me := modelErr(t, err)
			assert.Equal(t, harness.CodeInvalidRequest, me.Code)
			assert.Contains(t, me.Message, `tool "bad_tool"`)
			assert.Contains(t, me.Message, tc.want)
			assert.Zero(t, len(p.Requests()), "refused before sending")
		})
	}
	t.Run("formats DeepSeek takes", func(t *testing.T) {
		p := newProvider(t, openaitest.DeepSeek(sse(text("ok"), finish("stop"))))
		m, err := openai.New(openai.Config{BaseURL: p.URL() + "/beta", APIKey: testKey, Model: "deepseek-flash",
			Dialect: openai.DialectDeepSeek, StrictTools: true})
		require.NoError(t, err)
		tools := []model.Tool{closed(`{"type":"string","format":"email"}`), closed(`{"type":"string","format":"uuid"}`)}
		tools[1].Name = "other"
		_, err = drain(t, m, context.Background(), toolRequest(tools...))
		require.NoError(t, err)
		assert.Equal(t, "/beta/chat/completions", p.Requests()[0].Path)
	})
	t.Run("129 functions", func(t *testing.T) {
		p, m := deepSeek(t, openai.Config{StrictTools: true}, 1)
		var tools []model.Tool
		for i := range 129 {
			tl := lsTool
			tl.Name = fmt.Sprintf("tool_%d", i)
			tools = append(tools, tl)
		}
		_, err := drain(t, m, context.Background(), toolRequest(tools...))
		me := modelErr(t, err)
		assert.Equal(t, harness.CodeInvalidRequest, me.Code)
		assert.Contains(t, me.Message, "129 tools")
		assert.Contains(t, me.Message, "at most 128")
		assert.Zero(t, len(p.Requests()), "refused before sending")
	})
	t.Run("OpenAI keeps its own formats", func(t *testing.T) {
		p := newProvider(t, sse(text("ok"), finish("stop")))
		m := p.model(openai.Config{StrictTools: true, Dialect: openai.DialectOpenAI})
		_, err := drain(t, m, context.Background(), toolRequest(closed(`{"type":"string","format":"date"}`)))
		require.NoError(t, err)
	})
}

// answerSchema is the schema of the structured answer these tests ask
// for.
const answerSchema = `{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer"},"notes":{"type":"array","items":{"type":"string"}}},"required":["verdict","score","notes"],"additionalProperties":false}`

// DeepSeek's JSON output takes only "json_object": the schema reaches
// the model in the prompt, which says "json" and shows an example of the
// shape, as DeepSeek's guide asks.
func TestDeepSeekStructuredOutputShowsTheSchema(t *testing.T) {
	p, m := deepSeek(t, openai.Config{}, 2)
	req := &model.Request{
		System:   "You review code.",
		Messages: []harness.Message{userText("review main.go")},
		Output:   &model.Output{Name: "review", Schema: json.RawMessage(answerSchema)},
	}
	_, err := drain(t, m, context.Background(), req)
	require.NoError(t, err)
	sent := p.Requests()[0]
	assert.Equal(t, map[string]any{"type": "json_object"}, sent.JSON(t)["response_format"])
	msgs := sent.Messages(t)
	last := msgs[len(msgs)-1]
	assert.Equal(t, "user", last["role"])
	instr := last["content"].(string)
	assert.Contains(t, instr, "review main.go", "the instruction follows the user's text in the same message")
	assert.Contains(t, strings.ToLower(instr), "json")
	assert.Contains(t, instr, answerSchema, "the schema, as given")
	assert.Contains(t, instr, `{"verdict":"pass","score":0,"notes":["string"]}`, "an example derived from the schema")
	assert.Equal(t, "You review code.", msgs[0]["content"], "the system prompt is unchanged, for the prefix cache")

	// The instruction is not history: the next request of the turn
	// carries it once, at its end again.
	req.Messages = append(req.Messages, harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{harness.TextBlock("not json")}},
		userText("That was not valid."))
	_, err = drain(t, m, context.Background(), req)
	require.NoError(t, err)
	msgs = p.Requests()[1].Messages(t)
	assert.Equal(t, "review main.go", msgs[1]["content"])
	assert.Equal(t, 1, strings.Count(p.Requests()[1].Text(t), "verdict\\\":\\\"pass"))
	assert.Contains(t, msgs[len(msgs)-1]["content"], "That was not valid.")
}

// DeepSeek maps minimal, xhigh and ultra onto its own levels server-side:
// New accepts every value it documents and sends it as given.
func TestDeepSeekEffortValues(t *testing.T) {
	for _, effort := range []string{"minimal", "low", "medium", "high", "xhigh", "max", "ultra"} {
		p, m := deepSeek(t, openai.Config{ReasoningEffort: effort}, 1)
		_, err := drain(t, m, context.Background(), simpleRequest())
		require.NoError(t, err, effort)
		assert.Equal(t, effort, p.Requests()[0].JSON(t)["reasoning_effort"])
	}
	_, err := openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: "k", Model: "deepseek-flash", ReasoningEffort: "extreme"})
	assert.ErrorContains(t, err, "minimal, low, medium, high, xhigh, max or ultra")
}

// Every id DeepSeek serves is in the catalog (window, images) and in the
// price table, the legacy ids as V4.1 Flash: one list feeds both.
func TestDeepSeekServedIDsAreKnown(t *testing.T) {
	prices := pricing.DeepSeek()
	flash, _ := openai.LookupModel("deepseek-flash")
	flashPrice, _ := prices.Price("deepseek-flash")
	for _, id := range openaitest.DeepSeekModels {
		info, ok := openai.LookupModel(id)
		require.True(t, ok, "DeepSeek serves %s: the catalog must know it", id)
		assert.Equal(t, 1_000_000, info.ContextWindow, id)
		_, ok = prices.Price(id)
		assert.True(t, ok, "DeepSeek serves %s: the price table must know it", id)
		// And the fake endpoint takes it.
		p := newProvider(t, openaitest.DeepSeek(sse(text("ok"), finish("stop"))))
		_, err := drain(t, p.modelNamed(id, openai.Config{Dialect: openai.DialectDeepSeek}), context.Background(), simpleRequest())
		require.NoError(t, err, id)
	}
	for _, id := range []string{"deepseek-v4-flash", "deepseek-v4-flash-vision-exp"} {
		info, _ := openai.LookupModel(id)
		assert.Equal(t, flash.Input, info.Input, "%s takes images as V4.1 Flash does", id)
		p, _ := prices.Price(id)
		assert.Equal(t, flashPrice, p, "%s is billed at the Flash price", id)
	}
}

// keepAlivesAfter streams head, then only keep-alive comments every
// 10ms until the client goes.
func keepAlivesAfter(head string) reply {
	return reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}}
}

// Keep-alives prove the connection lives, not that the answer
// progresses: once the answer has begun, a stream of nothing but
// keep-alives is dropped after StallTimeout as a timeout the loop
// retries, whatever the idle timeout (which keep-alives keep resetting).
func TestKeepAlivesDoNotHoldAStalledAnswer(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, keepAlivesAfter(streamBody(role(), reasoning("thinking"), text("then nothing"))))
	m := p.model(openai.Config{StallTimeout: 150 * time.Millisecond, IdleTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	chunks, err := drain(t, m, ctx, simpleRequest())
	me := modelErr(t, err)
	assert.Equal(t, harness.CodeTransport, me.Code, "not cancelled by the test's deadline: %v", err)
	assert.True(t, me.Retryable())
	assert.ErrorIs(t, err, harness.CodeTimeout)
	assert.Contains(t, me.Message, "no content from the model for 150ms")
	assert.Contains(t, me.Message, "keep-alives")
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, "then nothing", joinChunks(chunks).Message().Text())
}

// Before the first content, keep-alives are a request waiting in the
// provider's queue (DeepSeek holds one up to 10 minutes): StallTimeout
// does not apply, QueueTimeout does.
func TestKeepAlivesWhileQueued(t *testing.T) {
	leakcheck.Check(t)
	queued := func(wait time.Duration) reply {
		return reply{Handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				io.WriteString(w, ": keep-alive\n\n")
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, streamBody(text("served"), finish("stop"))+"data: [DONE]\n\n")
		}}
	}
	p := newProvider(t, queued(300*time.Millisecond))
	chunks, err := drain(t, p.model(openai.Config{StallTimeout: 50 * time.Millisecond}), context.Background(), simpleRequest())
	require.NoError(t, err)
	assert.Equal(t, "served", joinChunks(chunks).Message().Text())

	p = newProvider(t, keepAlivesAfter(""))
	_, err = drain(t, p.model(openai.Config{QueueTimeout: 100 * time.Millisecond}), context.Background(), simpleRequest())
	me := modelErr(t, err)
	assert.Equal(t, harness.CodeTransport, me.Code)
	assert.ErrorIs(t, err, harness.CodeTimeout)
	assert.Contains(t, me.Message, "no answer began within 100ms")

	for name, cfg := range map[string]openai.Config{
		"stall": {StallTimeout: -2}, "queue": {QueueTimeout: -2},
	} {
		_, err := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1", Model: "m", StallTimeout: cfg.StallTimeout, QueueTimeout: cfg.QueueTimeout})
		assert.NoError(t, err, "%s: a negative timeout disables the bound", name)
	}
}

// Through the loop: a typed turn on DeepSeek gets the schema in its
// prompt, and the loop validates the answer as with any provider,
// asking once more when it does not fit.
func TestDeepSeekTypedTurnThroughTheLoop(t *testing.T) {
	p := newProvider(t,
		openaitest.DeepSeek(sse(text(`{"verdict":"maybe","score":1,"notes":[]}`), finish("stop"))),
		openaitest.DeepSeek(sse(text(`{"verdict":"pass","score":9,"notes":["tidy"]}`), finish("stop"))),
	)
	loop, err := agent.New(agent.WithModel(p.model(openai.Config{Dialect: openai.DialectDeepSeek})))
	require.NoError(t, err)
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	var end *agent.TurnEnd
	for ev, err := range s.RunOutput(context.Background(), "review main.go", model.Output{Name: "review", Schema: json.RawMessage(answerSchema)}) {
		if e, ok := ev.(*agent.TurnEnd); ok {
			end = e
			require.NoError(t, err)
		}
	}
	require.NotNil(t, end)
	assert.JSONEq(t, `{"verdict":"pass","score":9,"notes":["tidy"]}`, string(end.Output))
	require.Len(t, p.Requests(), 2, "the invalid first answer was repaired")
	for _, r := range p.Requests() {
		assert.Contains(t, r.Text(t), "valid against this JSON Schema")
	}
}
