package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies under testdata/golden")

// dialectHistory is a conversation with every kind of message: reasoning
// with a tool call, a tool call without reasoning, a plain answer with
// reasoning, tool results, a reminder after a user message.
func dialectHistory() *model.Request {
	return &model.Request{
		System: "You are terse.",
		Messages: []harness.Message{
			userText("list and read"),
			{Role: harness.RoleAssistant, Content: []harness.Block{
				{Type: harness.BlockReasoning, Text: "List first."},
				call("call_1", "ls", `{"path":"."}`),
			}},
			result("call_1", "ls", harness.TextBlock("main.go")),
			// DeepSeek V4 makes tool calls with no reasoning at all.
			{Role: harness.RoleAssistant, Content: []harness.Block{call("call_2", "read", `{"path":"main.go"}`)}},
			result("call_2", "read", harness.TextBlock("package main\n\"quoted\" <tag> & \u2028")),
			{Role: harness.RoleAssistant, Content: []harness.Block{
				{Type: harness.BlockReasoning, Text: "Done."},
				harness.TextBlock("It is a main package."),
			}},
			userText("thanks"),
			userText("<system-reminder>\nbe brief\n</system-reminder>"),
		},
		Tools: []model.Tool{
			{Name: "ls", Description: "List a directory.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{
				"type": "object",
				"properties": {"path": {"type": "string", "format": "uri-reference"}},
				"required": ["path"],
				"additionalProperties": false
			}`)},
		},
	}
}

// TestRequestGolden pins the exact bytes each dialect sends for the same
// history and controls. Run with -update to rewrite them after an
// intended change, and read the diff.
func TestRequestGolden(t *testing.T) {
	// all sets every request control on c.
	all := func(c openai.Config) openai.Config {
		c.MaxOutputTokens, c.Temperature, c.TopP, c.Seed = 1000, new(0.2), new(0.9), new(int64(7))
		c.ToolChoice, c.ParallelToolCalls, c.ReasoningEffort = "read", new(false), "high"
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  openai.Config
	}{
		{"deepseek", all(openai.Config{Dialect: openai.DialectDeepSeek, Thinking: new(false)})},
		{"deepseek-plain", openai.Config{Dialect: openai.DialectDeepSeek}},
		{"openai", all(openai.Config{Dialect: openai.DialectOpenAI})},
		{"generic", all(openai.Config{Thinking: new(false), JSONOutput: true})},
		{"generic-plain-nonstream", openai.Config{DisableStreaming: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply := sse(text("ok"), finish("stop"))
			if strings.HasSuffix(tc.name, "nonstream") {
				reply = jsonReply(completion("", "ok", "stop", nil))
			}
			p := newProvider(t, reply)
			_, err := drain(t, p.model(tc.cfg), context.Background(), dialectHistory())
			require.NoError(t, err)
			got := p.Requests()[0].Body
			require.True(t, json.Valid(got), "%s", got)
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, got))
			assert.Equal(t, compact.String(), string(got), "the body is compact")
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, got, "", "  "))
			path := filepath.Join("testdata", "golden", tc.name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, append(pretty.Bytes(), '\n'), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create it")
			assert.Equal(t, string(want), pretty.String()+"\n")
		})
	}
}

// The dialect's rules, asserted field by field so a failure says which.
func TestDialectRules(t *testing.T) {
	assistants := func(c captured) []map[string]any {
		var out []map[string]any
		for _, m := range c.Messages(t) {
			if m["role"] == "assistant" {
				out = append(out, m)
			}
		}
		return out
	}
	t.Run("deepseek echoes reasoning on every tool-call turn", func(t *testing.T) {
		as := assistants(sendOne(t, dialectHistory(), openai.Config{Dialect: openai.DialectDeepSeek}))
		require.Len(t, as, 3)
		assert.Equal(t, "List first.", as[0]["reasoning_content"])
		assert.Contains(t, as[1], "reasoning_content", "a tool-call turn without reasoning still carries the field")
		assert.Equal(t, "", as[1]["reasoning_content"])
		assert.Equal(t, "", as[1]["content"], `content is "" on a tool-call-only turn`)
		assert.Equal(t, "Done.", as[2]["reasoning_content"])
	})
	for _, d := range []openai.Dialect{openai.DialectOpenAI, openai.DialectGeneric} {
		t.Run(string(d)+" sends no reasoning back", func(t *testing.T) {
			c := sendOne(t, dialectHistory(), openai.Config{Dialect: d})
			assert.NotContains(t, string(c.Body), "reasoning_content")
			assert.NotContains(t, string(c.Body), `"reasoning"`)
			for _, a := range assistants(c) {
				assert.Contains(t, a, "content")
			}
		})
	}
	t.Run("max tokens spelling", func(t *testing.T) {
		req := &model.Request{Messages: []harness.Message{userText("x")}}
		o := sendOne(t, req, openai.Config{Dialect: openai.DialectOpenAI, MaxOutputTokens: 5}).JSON(t)
		assert.Equal(t, float64(5), o["max_completion_tokens"])
		assert.NotContains(t, o, "max_tokens")
		g := sendOne(t, req, openai.Config{MaxOutputTokens: 5}).JSON(t)
		assert.Equal(t, float64(5), g["max_tokens"])
		assert.NotContains(t, g, "max_completion_tokens")
	})
	t.Run("deepseek takes no seed", func(t *testing.T) {
		req := &model.Request{Messages: []harness.Message{userText("x")}}
		assert.NotContains(t, sendOne(t, req, openai.Config{Dialect: openai.DialectDeepSeek, Seed: new(int64(1))}).JSON(t), "seed")
		assert.Equal(t, float64(1), sendOne(t, req, openai.Config{Seed: new(int64(1))}).JSON(t)["seed"])
	})
	t.Run("tool choice", func(t *testing.T) {
		req := dialectHistory()
		for choice, want := range map[string]any{
			"auto": "auto", "none": "none", "required": "required",
			"read": map[string]any{"type": "function", "function": map[string]any{"name": "read"}},
		} {
			assert.Equal(t, want, sendOne(t, req, openai.Config{ToolChoice: choice}).JSON(t)["tool_choice"], choice)
		}
		noTools := &model.Request{Messages: []harness.Message{userText("x")}}
		assert.NotContains(t, sendOne(t, noTools, openai.Config{ToolChoice: "required"}).JSON(t), "tool_choice", "no tools, no tool_choice")
	})
	t.Run("structured answer", func(t *testing.T) {
		req := &model.Request{Messages: []harness.Message{userText("x")}, Output: &model.Output{Name: "verdict",
			Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)}}
		rf := sendOne(t, req).JSON(t)["response_format"]
		assert.Equal(t, map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "verdict", "strict": true,
			"schema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []any{"ok"}, "additionalProperties": false}}}, rf)
		ds := sendOne(t, req, openai.Config{Dialect: openai.DialectDeepSeek}).JSON(t)["response_format"]
		assert.Equal(t, map[string]any{"type": "json_object"}, ds, "DeepSeek takes json_object only")
		open := &model.Request{Messages: []harness.Message{userText("x")}, Output: &model.Output{Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}}
		js := sendOne(t, open).JSON(t)["response_format"].(map[string]any)["json_schema"].(map[string]any)
		assert.Equal(t, false, js["strict"], "an open schema is not sent as strict")
		assert.Equal(t, "answer", js["name"])
	})
}

// The dialect follows the host unless an option says otherwise.
func TestDialectChoice(t *testing.T) {
	for url, want := range map[string]openai.Dialect{
		"https://api.deepseek.com":                    openai.DialectDeepSeek,
		"https://api.moonshot.ai/v1":                  openai.DialectDeepSeek,
		"https://api.openai.com/v1":                   openai.DialectOpenAI,
		"https://res.openai.azure.com/openai/v1":      openai.DialectOpenAI,
		"https://openrouter.ai/api/v1":                openai.DialectGeneric,
		"https://api.groq.com/openai/v1":              openai.DialectGeneric,
		"https://api.cerebras.ai/v1":                  openai.DialectGeneric,
		"http://127.0.0.1:8080/v1":                    openai.DialectGeneric,
		"https://dashscope-intl.aliyuncs.com/compat/": openai.DialectGeneric,
	} {
		m, err := openai.New(openai.Config{BaseURL: url, APIKey: "k", Model: "m"})
		require.NoError(t, err)
		assert.Equal(t, want, openai.DialectOf(m), url)
	}
	m, err := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Model: "kimi-k2-thinking", Dialect: openai.DialectDeepSeek})
	require.NoError(t, err)
	assert.Equal(t, openai.DialectDeepSeek, openai.DialectOf(m))
	m, err = openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: "k", Model: "deepseek-flash", Dialect: openai.DialectGeneric})
	require.NoError(t, err)
	assert.Equal(t, openai.DialectGeneric, openai.DialectOf(m))

	for _, s := range []string{"deepseek", "OpenAI", " generic "} {
		_, err := openai.ParseDialect(s)
		assert.NoError(t, err, s)
	}
	_, err = openai.ParseDialect("anthropic")
	assert.ErrorContains(t, err, "deepseek, openai or generic")
}

func TestInvalidOptionsAreErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg  openai.Config
		want string
	}{
		"temperature":     {openai.Config{Temperature: new(3.0)}, "temperature 3"},
		"temperature NaN": {openai.Config{Temperature: new(math.NaN())}, "temperature NaN"},
		"top_p":           {openai.Config{TopP: new(0.0)}, "top_p 0"},
		"max tokens":      {openai.Config{MaxOutputTokens: -1}, "negative"},
		"tool choice":     {openai.Config{ToolChoice: "a b"}, "tool choice"},
		"effort":          {openai.Config{ReasoningEffort: "very high"}, "reasoning effort"},
		"dialect":         {openai.Config{Dialect: "claude"}, "unknown dialect"},
		"openai thinking": {openai.Config{Dialect: openai.DialectOpenAI, Thinking: new(true)}, "no thinking switch"},
		"deepseek effort": {openai.Config{Dialect: openai.DialectDeepSeek, ReasoningEffort: "extreme"}, "minimal, low, medium, high, xhigh, max or ultra"},
		"negative window": {openai.Config{ContextWindow: -5}, "ContextWindow -5"},
		"header name":     {openai.Config{Header: http.Header{"X Bad": {"v"}}}, `Header "X Bad"`},
		"empty header":    {openai.Config{Header: http.Header{"": {"v"}}}, `Header ""`},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.BaseURL, tc.cfg.Model = "http://127.0.0.1:1", "m"
			m, err := openai.New(tc.cfg)
			assert.Nil(t, m)
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorIs(t, err, harness.CodeInvalidOption)
		})
	}
	// Every problem is reported, not only the first.
	_, err := openai.New(openai.Config{BaseURL: "http://127.0.0.1:1", Model: "m", Temperature: new(-1.0), MaxOutputTokens: -2})
	assert.ErrorContains(t, err, "temperature -1")
	assert.ErrorContains(t, err, "max output tokens -2 is negative")
}

func TestStrictTools(t *testing.T) {
	closed := model.Tool{Name: "ls", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"opts":{"type":"object","properties":{"all":{"type":["boolean","null"]}},"required":["all"],"additionalProperties":false}},"required":["path","opts"],"additionalProperties":false}`)}
	t.Run("closed schemas go out strict", func(t *testing.T) {
		c := sendOne(t, &model.Request{Messages: []harness.Message{userText("x")}, Tools: []model.Tool{closed}}, openai.Config{StrictTools: true})
		fn := c.JSON(t)["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
		assert.Equal(t, true, fn["strict"])
	})
	for name, tc := range map[string]struct{ schema, want string }{
		"optional property": {`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`, `field "b" is not listed in "required"`},
		"open object":       {`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `the top level is an object without "additionalProperties": false`},
		"nested open":       {`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}},"required":["o"],"additionalProperties":false}`, `field "o" is an object without`},
		"format":            {`{"type":"object","properties":{"u":{"type":"string","format":"uri"}},"required":["u"],"additionalProperties":false}`, `field "u" uses the string format "uri"`},
		"array items":       {`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}}},"required":["l"],"additionalProperties":false}`, `field "l[]" is an object without`},
		"not an object":     {`{"type":"string"}`, "top level must be an object"},
	} {
		t.Run(name, func(t *testing.T) {
			p := newProvider(t)
			req := &model.Request{Messages: []harness.Message{userText("x")}, Tools: []model.Tool{{Name: "bad_tool", Parameters: json.RawMessage(tc.schema)}}}
			_, err := drain(t, p.model(openai.Config{StrictTools: true}), context.Background(), req)
			me := modelErr(t, err)
			assert.Equal(t, harness.CodeInvalidRequest, me.Code)
			assert.Contains(t, me.Message, `tool "bad_tool"`)
			assert.Contains(t, me.Message, tc.want)
			assert.Empty(t, p.Requests(), "refused before sending")
		})
	}
	t.Run("deepseek host uses the beta endpoint", func(t *testing.T) {
		var path string
		client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			path = r.URL.Path
			return nil, http.ErrHandlerTimeout
		})}
		deepSeek := func(cfg openai.Config) model.Model {
			cfg.BaseURL, cfg.APIKey, cfg.Model = "https://api.deepseek.com", "sk-x", "deepseek-flash"
			m, err := openai.New(cfg)
			require.NoError(t, err)
			return m
		}
		_, _ = drain(t, deepSeek(openai.Config{StrictTools: true, HTTPClient: client}), context.Background(), simpleRequest())
		assert.Equal(t, "/beta/chat/completions", path)
		_, _ = drain(t, deepSeek(openai.Config{HTTPClient: client}), context.Background(), simpleRequest())
		assert.Equal(t, "/chat/completions", path)
	})
}

// deepSeekRule answers 400 exactly as DeepSeek does when an assistant
// message that made tool calls comes back without reasoning_content in
// thinking mode; otherwise it passes the request on.
func deepSeekRule(t *testing.T, next reply) reply {
	return reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []map[string]json.RawMessage `json:"messages"`
		}
		buf := new(bytes.Buffer)
		_, _ = buf.ReadFrom(r.Body)
		require.NoError(t, json.Unmarshal(buf.Bytes(), &body))
		for _, m := range body.Messages {
			if string(m["role"]) != `"assistant"` || len(m["tool_calls"]) == 0 {
				continue
			}
			if rc, ok := m["reasoning_content"]; !ok || string(rc) == "null" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"error":{"message":"The reasoning_content in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`))
				return
			}
		}
		r.Body = readCloser{bytes.NewReader(buf.Bytes())}
		next.ServeHTTP(w, r)
	}}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// A DeepSeek thinking-mode conversation whose tool-call turn had no
// reasoning round-trips through the loop against a server that enforces
// DeepSeek's rule; the generic dialect, which sends no reasoning, is
// refused by the same server.
func TestDeepSeekToolTurnWithoutReasoningRoundTrips(t *testing.T) {
	lsTool := tools.Define(tools.Spec{Name: "ls", Description: "List.", ConcurrencySafe: true},
		func(ctx context.Context, call *tools.Call, in struct{}) (*harness.ToolResult, error) {
			return harness.TextResult("main.go"), nil
		})
	run := func(t *testing.T, d openai.Dialect) (*provider, error) {
		p := newProvider(t)
		p.Add(
			deepSeekRule(t, sse(role(), toolDelta(0, "call_00_a", "ls", "{}"), finish("tool_calls"))),
			deepSeekRule(t, sse(role(), text("main.go is there."), finish("stop"))),
		)
		loop, err := agent.New(agent.WithModel(p.model(openai.Config{Dialect: d, Thinking: new(true)})), agent.WithTools(lsTool), agent.WithLimits(agent.Limits{MaxSteps: 4}))
		require.NoError(t, err)
		t.Cleanup(func() { loop.Close() })
		s, err := loop.NewSession(context.Background(), session.Header{})
		require.NoError(t, err)
		defer s.Close()
		var failed error
		for _, err := range s.Run(context.Background(), "what is here?") {
			if err != nil {
				failed = err
			}
		}
		return p, failed
	}
	t.Run("deepseek", func(t *testing.T) {
		p, err := run(t, openai.DialectDeepSeek)
		require.NoError(t, err)
		require.Len(t, p.Requests(), 2)
		msgs := p.Requests()[1].Messages(t)
		var a map[string]any
		for _, m := range msgs {
			if m["role"] == "assistant" {
				a = m
			}
		}
		require.NotNil(t, a)
		assert.Equal(t, "", a["reasoning_content"])
		assert.Equal(t, "", a["content"])
	})
	t.Run("generic is refused by the rule", func(t *testing.T) {
		_, err := run(t, openai.DialectGeneric)
		require.Error(t, err)
		assert.Equal(t, harness.CodeInvalidRequest, harness.CodeOf(err))
		assert.ErrorContains(t, err, "must be passed back")
	})
}
