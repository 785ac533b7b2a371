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
	"syscall"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/benchbase"
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
	return srv
}

// BenchmarkStream reads a 2000-piece answer through Model.Stream (the
// SDK's request, its SSE decoder, chunk decoding and our conversion)
// and, interleaved in the same loop, with the hand-written equivalent: a
// plain POST, lines split with bufio, each data line decoded into a
// minimal struct. It reports each one's ns/op and the ratio
// (stream/baseline):
//
//	go test ./agent/openai -run '^$' -bench 'BenchmarkStream$' -benchtime 200x
func BenchmarkStream(b *testing.B) {
	srv := benchServer(b)
	m, err := newChat(Config{BaseURL: srv.URL, APIKey: "sk-bench", Model: "deepseek-flash"})
	if err != nil {
		b.Fatal(err)
	}
	defer m.CloseIdleConnections()
	req := &model.Request{Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("go")}}}}
	stream := func() {
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
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	type chunk struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	baseline := func() {
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
	b.ReportAllocs()
	benchbase.Interleave(b, benchbase.Part{Name: "stream", Run: stream}, benchbase.Part{Name: "baseline", Run: baseline})
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

// BenchmarkRequestBody builds the request for a 200-step history again,
// as every step does: warm, each message's encoding reused.
func BenchmarkRequestBody(b *testing.B) {
	m, err := newChat(Config{BaseURL: "http://127.0.0.1:1", Model: "deepseek-flash"})
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
		b.SetBytes(body.size)
	}
}

// BenchmarkRequestBodyCold builds the same request on a fresh model
// each time: every message encoded, nothing reused.
func BenchmarkRequestBodyCold(b *testing.B) {
	req := benchHistory()
	b.ReportAllocs()
	for b.Loop() {
		m, err := newChat(Config{BaseURL: "http://127.0.0.1:1", Model: "deepseek-flash"})
		if err != nil {
			b.Fatal(err)
		}
		body, _, err := m.body(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(body.size)
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

// cannedTransport answers every request with the same small event
// stream, after reading the request body to the end as a connection
// would (a copy the SDK's baseline pays too): what a step costs with the
// bytes written to the wire, without the network.
type cannedTransport struct{ body []byte }

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		// Read as a connection copies a body out, a buffer at a time
		// (io.Copy to io.Discard would let a body that is a WriterTo skip
		// the copy).
		buf := make([]byte, 32<<10)
		for {
			_, err := r.Body.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
		}
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(c.body)),
		Request: r,
	}, nil
}

func stepReply() []byte {
	return []byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"deepseek-flash","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"next"},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"deepseek-flash","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"read","arguments":"{\"file_path\":\"a.go\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_cache_hit_tokens":8,"prompt_cache_miss_tokens":2}}` + "\n\n" +
		"data: [DONE]\n\n")
}

// stepHistory is a history of n messages (a user message, then
// assistant tool calls and their results) with room for two more.
func stepHistory(n int) []harness.Message {
	msgs := make([]harness.Message, 0, n+2)
	msgs = append(msgs, harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("fix the build")}})
	for i := 0; len(msgs) < n; i++ {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{
			{Type: harness.BlockReasoning, Text: "thinking about the next step"},
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id, Name: "read", Arguments: `{"file_path":"main.go"}`}},
		}})
		if len(msgs) < n {
			msgs = append(msgs, harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult, ToolResult: &harness.ToolResult{
				CallID: id, Name: "read", Content: []harness.Block{harness.TextBlock("package main // a line of the file\n")},
			}}}})
		}
	}
	return msgs
}

// stepTail writes a step's two new messages (fresh content slices, as
// the loop makes them) after the first n.
func stepTail(msgs []harness.Message, n, step int) []harness.Message {
	id := fmt.Sprintf("new_%d", step)
	msgs = msgs[:n+2]
	msgs[n] = harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{
		{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id, Name: "read", Arguments: `{"file_path":"a.go"}`}}}}
	msgs[n+1] = harness.Message{Role: harness.RoleTool, Content: []harness.Block{{Type: harness.BlockToolResult, ToolResult: &harness.ToolResult{
		CallID: id, Name: "read", Content: []harness.Block{harness.TextBlock("ok")}}}}}
	return msgs
}

var stepSizes = []int{10, 1000, 5000}

// BenchmarkWarmStep is one model call of a warm loop step through
// Model.Stream, with 10, 1,000 and 5,000 messages of history plus the
// step's two new ones: the request built (each old message's encoding
// reused), sent through the SDK's client and middleware to a transport
// that reads the body and answers at once, and the answer decoded.
// Beside each size, sdk: the same step with the SDK used directly, its
// params built from the whole history with its helpers and its stream
// accumulator, on its own copy of the history. All six run interleaved
// (benchbase.Interleave), one step of each per iteration, the first
// rotating, so every ratio comes out of one run: 5000/10 and cpu-5000/10 (a step with 5,000 messages over one
// with 10, wall and CPU; the target is ≤ 2), the same for the
// SDK (sdk-5000/10), and harness/sdk-N, cpu-harness/sdk-N for each size.
func BenchmarkWarmStep(b *testing.B) {
	reply := stepReply()
	client := &http.Client{Transport: cannedTransport{body: reply}}
	tool := model.Tool{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)}
	type part struct {
		name string
		step int
		cpu  time.Duration
		run  func(step int)
	}
	var parts []*part // harness-n, sdk-n for each n
	for _, n := range stepSizes {
		m, err := newChat(Config{BaseURL: "http://127.0.0.1:1", APIKey: "sk-bench", Model: "deepseek-flash", HTTPClient: client, Dialect: DialectDeepSeek})
		if err != nil {
			b.Fatal(err)
		}
		msgs := stepHistory(n)
		req := &model.Request{System: "You are a coding agent.", Tools: []model.Tool{tool}}
		parts = append(parts, &part{name: fmt.Sprintf("harness-%d", n), run: func(step int) {
			req.Messages = stepTail(msgs, n, step)
			calls := 0
			for c, err := range m.Stream(context.Background(), req) {
				if err != nil {
					b.Fatal(err)
				}
				if c.Type == model.ChunkToolCall {
					calls++
				}
			}
			if calls != 1 {
				b.Fatalf("%d tool-call chunks", calls)
			}
		}})
		svc := oai.NewChatCompletionService(option.WithBaseURL("http://127.0.0.1:1"), option.WithAPIKey("sk-bench"),
			option.WithHTTPClient(client), option.WithMaxRetries(0))
		sdkMsgs := stepHistory(n)
		parts = append(parts, &part{name: fmt.Sprintf("sdk-%d", n), run: func(step int) {
			p := oai.ChatCompletionNewParams{Model: "deepseek-flash", Messages: sdkMessages("You are a coding agent.", stepTail(sdkMsgs, n, step)),
				Tools: []oai.ChatCompletionToolUnionParam{oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
					Name: tool.Name, Description: oai.String(tool.Description),
					Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"file_path": map[string]any{"type": "string"}}, "required": []string{"file_path"}},
				})},
				StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
			}
			stream := svc.NewStreaming(context.Background(), p)
			var acc oai.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				b.Fatal(err)
			}
			stream.Close()
			if len(acc.Choices) == 0 || len(acc.Choices[0].Message.ToolCalls) != 1 {
				b.Fatal("no tool call")
			}
		}})
	}
	bparts := make([]benchbase.Part, len(parts))
	for i, p := range parts {
		bparts[i] = benchbase.Part{Name: p.name, Run: func() {
			p.step++
			start := cpuTime()
			p.run(p.step)
			p.cpu += cpuTime() - start
		}}
	}
	b.ReportAllocs()
	wall := benchbase.Interleave(b, bparts...)
	// Interleave's "ratio" is harness/sdk with the fewest messages.
	last := 2 * (len(stepSizes) - 1)
	first, most := stepSizes[0], stepSizes[len(stepSizes)-1]
	b.ReportMetric(benchbase.Ratio(wall[last], wall[0]), fmt.Sprintf("%d/%d", most, first))
	b.ReportMetric(benchbase.Ratio(parts[last].cpu, parts[0].cpu), fmt.Sprintf("cpu-%d/%d", most, first))
	b.ReportMetric(benchbase.Ratio(wall[last+1], wall[1]), fmt.Sprintf("sdk-%d/%d", most, first))
	for i, n := range stepSizes {
		b.ReportMetric(benchbase.Ratio(wall[2*i], wall[2*i+1]), fmt.Sprintf("harness/sdk-%d", n))
		b.ReportMetric(benchbase.Ratio(parts[2*i].cpu, parts[2*i+1].cpu), fmt.Sprintf("cpu-harness/sdk-%d", n))
	}
}

// sdkMessages builds the history with the SDK's helpers, reasoning put
// back by hand as the SDK has no field for it.
func sdkMessages(system string, msgs []harness.Message) []oai.ChatCompletionMessageParamUnion {
	out := []oai.ChatCompletionMessageParamUnion{oai.SystemMessage(system)}
	for _, msg := range msgs {
		switch msg.Role {
		case harness.RoleUser:
			out = append(out, oai.UserMessage(msg.Content[0].Text))
		case harness.RoleAssistant:
			am := &oai.ChatCompletionAssistantMessageParam{}
			am.Content.OfString = oai.String("")
			reasoning := ""
			for _, blk := range msg.Content {
				switch blk.Type {
				case harness.BlockReasoning:
					reasoning += blk.Text
				case harness.BlockToolCall:
					am.ToolCalls = append(am.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
						ID: blk.ToolCall.ID, Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: blk.ToolCall.Name, Arguments: blk.ToolCall.Arguments}}})
				}
			}
			am.SetExtraFields(map[string]any{"reasoning_content": reasoning})
			out = append(out, oai.ChatCompletionMessageParamUnion{OfAssistant: am})
		case harness.RoleTool:
			r := msg.Content[0].ToolResult
			out = append(out, oai.ToolMessage(r.Content[0].Text, r.CallID))
		}
	}
	return out
}

// cpuTime is the process's user and system CPU time so far. On a shared
// machine it is a steadier measure than wall time: other processes'
// load stretches the wall clock but not this process's CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start (the GC's
// included), as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}
