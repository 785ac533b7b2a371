// Package fakemodel is a deterministic OpenAI-compatible model for the
// example's tests, its benchmark and its offline demo: its answer depends
// only on the messages of the request, so a model call retried on
// another worker gets the same answer.
//
// A prompt of the form "effects=N steps=S sleep=MS ..." makes the model
// call the record_effect tool N times in each of S steps (each call
// sleeping MS milliseconds), then answer "done: R results, U outcome
// unknown", counting the tool results of the turn. Any other prompt is
// answered with "You said: <prompt>".
package fakemodel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai/openaitest"
)

// Model is the model id the fake answers as.
const Model = "fake-durable"

var plan = regexp.MustCompile(`effects=(\d+) steps=(\d+) sleep=(\d+)`)

type message struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []any           `json:"tool_calls"`
}

func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Handler answers POST /chat/completions (and any path ending so).
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Messages []message `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			openaitest.Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"malformed request"}}`}.ServeHTTP(w, r)
			return
		}
		openaitest.Reply{Chunks: answer(req.Messages)}.ServeHTTP(w, r)
	})
}

// answer returns the chunks the model streams for a conversation.
func answer(msgs []message) []openaitest.Chunk {
	last := -1
	for i, m := range msgs {
		if m.Role == "user" {
			last = i
		}
	}
	if last < 0 {
		return []openaitest.Chunk{{Text: "There is no user message."}, {Finish: "stop"}}
	}
	prompt := text(msgs[last].Content)
	steps, results, unknown := 0, 0, 0
	for _, m := range msgs[last+1:] {
		switch m.Role {
		case "assistant":
			if len(m.ToolCalls) > 0 {
				steps++
			}
		case "tool":
			results++
			if strings.Contains(text(m.Content), "outcome of this") {
				unknown++
			}
		}
	}
	prompted := int64(100 + 10*len(msgs))
	usage := openaitest.Chunk{Usage: &harness.Usage{InputTokens: prompted, OutputTokens: 20, CacheMissTokens: prompted}}
	p := plan.FindStringSubmatch(prompt)
	if p == nil {
		return []openaitest.Chunk{{Text: "You said: " + prompt}, {Finish: "stop"}, usage}
	}
	n, _ := strconv.Atoi(p[1])
	s, _ := strconv.Atoi(p[2])
	sleep, _ := strconv.Atoi(p[3])
	if steps >= s || n == 0 {
		return []openaitest.Chunk{{Text: fmt.Sprintf("done: %d results, %d outcome unknown", results, unknown)}, {Finish: "stop"}, usage}
	}
	sum := sha256.Sum256([]byte(prompt))
	tag := hex.EncodeToString(sum[:5])
	var out []openaitest.Chunk
	for i := range n {
		id := fmt.Sprintf("call_%s_%d_%d", tag, steps+1, i)
		args := fmt.Sprintf(`{"sleep_ms":%d}`, sleep)
		out = append(out, openaitest.Chunk{ToolCall: &model.ToolCallDelta{Index: i, ID: id, Name: "record_effect", Arguments: args}})
	}
	return append(out, openaitest.Chunk{Finish: "tool_calls"}, usage)
}
