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
//
// A prompt of the form "full sleep=MS session=ID ..." runs every kind of tool once,
// a step each: write a file named after the prompt, read it, edit it,
// a bash command that appends "<ID> <call id>" to the file
// "effects" of the working directory (sleeping MS milliseconds around
// it), a task for the sub-agent "helper" (whose prompt makes it call
// record_effect once), and approved_effect, a call that waits for
// approval. It then answers as above.
//
// A prompt of the form "task sleep=MS ..." makes one task call for the
// sub-agent "helper", whose prompt makes it call record_effect once
// (sleeping MS milliseconds), then answers with the task's result:
// "done: <the sub-agent's answer>".
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

var (
	plan = regexp.MustCompile(`effects=(\d+) steps=(\d+) sleep=(\d+)`)
	full = regexp.MustCompile(`^full sleep=(\d+) session=(\S+)`)
	task = regexp.MustCompile(`^task sleep=(\d+)`)
)

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
		// Reminders and steered messages are not the user's prompt.
		if m.Role == "user" && isPrompt(text(m.Content)) {
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
	if f := full.FindStringSubmatch(prompt); f != nil {
		sleep, _ := strconv.Atoi(f[1])
		return fullStep(prompt, f[2], steps, results, unknown, sleep, usage)
	}
	if f := task.FindStringSubmatch(prompt); f != nil {
		return taskStep(prompt, f[1], msgs[last+1:], usage)
	}
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

// isPrompt reports a user message that starts a turn: not a reminder.
func isPrompt(s string) bool { return !strings.HasPrefix(s, "<system-reminder>") }

// fullStep is the answer of the full-toolset script at a step.
func fullStep(prompt, sessionID string, steps, results, unknown, sleep int, usage openaitest.Chunk) []openaitest.Chunk {
	sum := sha256.Sum256([]byte(prompt))
	tag := hex.EncodeToString(sum[:5])
	file := "f_" + tag + ".txt"
	id := fmt.Sprintf("call_%s_%d_0", tag, steps+1)
	var name, args string
	switch steps {
	case 0:
		name, args = "write", fmt.Sprintf(`{"file_path":%q,"content":"v0\n"}`, file)
	case 1:
		name, args = "read", fmt.Sprintf(`{"file_path":%q}`, file)
	case 2:
		name, args = "edit", fmt.Sprintf(`{"file_path":%q,"old_string":"v0","new_string":"v1"}`, file)
	case 3:
		half := float64(sleep) / 2000
		cmd := fmt.Sprintf("sleep %.3f; echo '%s %s' >> effects; sleep %.3f", half, sessionID, id, half)
		name, args = "bash", fmt.Sprintf(`{"command":%q}`, cmd)
	case 4:
		name, args = "task", fmt.Sprintf(`{"agent":"helper","description":"record one effect","prompt":"effects=1 steps=1 sleep=%d (%s)"}`, sleep, tag)
	case 5:
		name, args = "approved_effect", fmt.Sprintf(`{"sleep_ms":%d}`, sleep)
	default:
		return []openaitest.Chunk{{Text: fmt.Sprintf("done: %d results, %d outcome unknown", results, unknown)}, {Finish: "stop"}, usage}
	}
	return []openaitest.Chunk{{ToolCall: &model.ToolCallDelta{Index: 0, ID: id, Name: name, Arguments: args}}, {Finish: "tool_calls"}, usage}
}

// taskStep is the answer of the task script: the task call, then the
// sub-agent's answer.
func taskStep(prompt, sleep string, after []message, usage openaitest.Chunk) []openaitest.Chunk {
	for _, m := range after {
		if m.Role == "tool" {
			return []openaitest.Chunk{{Text: "done: " + text(m.Content)}, {Finish: "stop"}, usage}
		}
	}
	sum := sha256.Sum256([]byte(prompt))
	tag := hex.EncodeToString(sum[:5])
	id := fmt.Sprintf("call_%s_1_0", tag)
	args := fmt.Sprintf(`{"agent":"helper","description":"record one effect","prompt":"effects=1 steps=1 sleep=%s (%s)"}`, sleep, tag)
	return []openaitest.Chunk{{ToolCall: &model.ToolCallDelta{Index: 0, ID: id, Name: "task", Arguments: args}}, {Finish: "tool_calls"}, usage}
}
