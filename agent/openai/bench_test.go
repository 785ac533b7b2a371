package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

const benchChunks = 2000

// benchStream is an answer of benchChunks text pieces, a finish and a
// usage chunk, as DeepSeek streams it.
func benchStream() []byte {
	var b bytes.Buffer
	for i := range benchChunks {
		fmt.Fprintf(&b, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"deepseek-flash","choices":[{"index":0,"delta":{"content":"token %d "},"finish_reason":null}]}`+"\n\n", i)
	}
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"deepseek-flash","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"deepseek-flash","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2000,"total_tokens":2010,"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":10}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func benchServer(b *testing.B) *httptest.Server {
	body := benchStream()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	b.SetBytes(int64(len(body)))
	return srv
}

// BenchmarkStream reads a 2000-piece answer through Model.Stream: the
// SDK's request, its SSE decoder, chunk decoding and our conversion.
func BenchmarkStream(b *testing.B) {
	srv := benchServer(b)
	m, err := New(srv.URL, "sk-bench", "deepseek-flash")
	if err != nil {
		b.Fatal(err)
	}
	defer m.CloseIdleConnections()
	req := &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("go")}}}}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for c, err := range m.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
			if c.Type == model.ChunkText {
				n++
			}
		}
		if n != benchChunks {
			b.Fatalf("%d text chunks", n)
		}
	}
	b.ReportMetric(float64(benchChunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkStreamBaseline is the hand-written equivalent: a plain POST,
// lines split with bufio, each data line decoded into a minimal struct.
func BenchmarkStreamBaseline(b *testing.B) {
	srv := benchServer(b)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	type chunk struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"deepseek-flash","messages":[{"role":"user","content":"go"}],"stream":true}`))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		n := 0
		for sc.Scan() {
			line := sc.Bytes()
			data, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok || bytes.Equal(data, []byte("[DONE]")) {
				continue
			}
			var delta chunk
			if err := json.Unmarshal(data, &delta); err != nil {
				b.Fatal(err)
			}
			if len(delta.Choices) > 0 && delta.Choices[0].Delta.Content != "" {
				n++
			}
		}
		resp.Body.Close()
		if n != benchChunks {
			b.Fatalf("%d text chunks", n)
		}
	}
	b.ReportMetric(float64(benchChunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// benchHistory is a 200-step tool-calling conversation.
func benchHistory() *model.Request {
	req := &model.Request{System: strings.Repeat("You are a coding agent. ", 50)}
	req.Messages = append(req.Messages, harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("fix the build")}})
	for i := range 200 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{
				{Type: harness.BlockReasoning, Text: strings.Repeat("thinking about the next step ", 10)},
				{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id, Name: "read", Arguments: `{"file_path":"main.go"}`}},
			}},
			harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult, ToolResult: &harness.ToolResult{
				CallID: id, Name: "read", Content: []harness.Block{harness.TextBlock(strings.Repeat("package main // line\n", 100))},
			}}}},
		)
	}
	req.Tools = []model.Tool{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)}}
	return req
}

// BenchmarkRequestBody builds and encodes the request for a 200-step
// history, as every step does.
func BenchmarkRequestBody(b *testing.B) {
	m, err := New("http://127.0.0.1:1", "", "deepseek-flash")
	if err != nil {
		b.Fatal(err)
	}
	req := benchHistory()
	b.ReportAllocs()
	for b.Loop() {
		body, _, err := m.body(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(body)))
	}
}

// BenchmarkRequestBodyBaseline encodes the same history with
// encoding/json from plain structs shaped like the wire format.
func BenchmarkRequestBodyBaseline(b *testing.B) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type tc struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type msg struct {
		Role             string `json:"role"`
		Content          string `json:"content"`
		ReasoningContent string `json:"reasoning_content,omitempty"`
		ToolCalls        []tc   `json:"tool_calls,omitempty"`
		ToolCallID       string `json:"tool_call_id,omitempty"`
	}
	req := benchHistory()
	b.ReportAllocs()
	for b.Loop() {
		msgs := []msg{{Role: "system", Content: req.System}}
		for _, m := range req.Messages {
			out := msg{Role: string(m.Role)}
			for _, blk := range m.Content {
				switch blk.Type {
				case harness.BlockText:
					out.Content += blk.Text
				case harness.BlockReasoning:
					out.ReasoningContent += blk.Text
				case harness.BlockToolCall:
					out.ToolCalls = append(out.ToolCalls, tc{ID: blk.ToolCall.ID, Type: "function", Function: fn{blk.ToolCall.Name, blk.ToolCall.Arguments}})
				case harness.BlockToolResult:
					out.ToolCallID = blk.ToolResult.CallID
					for _, c := range blk.ToolResult.Content {
						out.Content += c.Text
					}
				}
			}
			msgs = append(msgs, out)
		}
		body, err := json.Marshal(map[string]any{"model": "deepseek-flash", "messages": msgs, "tools": req.Tools, "stream": true})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(body)))
	}
}
