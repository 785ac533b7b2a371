package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-harness/harness/agent/anthropic/anthropictest"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/benchbase"
	"github.com/go-harness/harness/internal/sse"
)

// benchStream is a long answer as Anthropic streams it: 4 KB of signed
// thinking, 16 KB of text and two tool calls of 4 KB of input each, in
// deltas of 8 bytes (about 3,600 events), with pings and usage.
func benchStream() []byte {
	input := `{"file_path":"/w/main.go","content":"` + strings.Repeat("x", 4000) + `"}`
	msg := anthropictest.Message{
		Blocks: []anthropictest.Block{
			{Thinking: strings.Repeat("think ", 680), Signature: strings.Repeat("s", 200)},
			{Text: strings.Repeat("word ", 3200)},
			{ToolUse: &anthropictest.ToolUse{ID: "toolu_1", Name: "write", Input: input}},
			{ToolUse: &anthropictest.ToolUse{ID: "toolu_2", Name: "write", Input: input}},
		},
		Usage: anthropictest.Usage{InputTokens: 100, CacheReadInputTokens: 5000, OutputTokens: 9000},
	}
	return []byte(anthropictest.Reply{Message: &msg}.Stream())
}

// decodeAdapter reads a stream as the adapter does: its SSE reader, its
// event decoding, the loop's assembler.
func decodeAdapter(stream []byte) (textLen, argsLen int, err error) {
	var a answer
	var asm model.Assembler
	emit := func(c model.Chunk) bool { asm.Add(c); return true }
	r := sse.NewReader(bytes.NewReader(stream))
	for !a.done {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if err := a.event(ev, emit); err != nil {
			return 0, 0, err
		}
	}
	msg := asm.Message()
	for _, c := range msg.ToolCalls() {
		argsLen += len(c.Arguments)
	}
	return len(msg.Text()), argsLen, nil
}

// decodeBaseline is the bare loop that does the same work: lines split
// with bufio, each data line decoded with encoding/json into a minimal
// struct, text, thinking and tool input joined in builders.
func decodeBaseline(stream []byte) (textLen, argsLen int, err error) {
	type event struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"content_block"`
		Delta struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			Thinking    string `json:"thinking"`
			Signature   string `json:"signature"`
			PartialJSON string `json:"partial_json"`
			StopReason  string `json:"stop_reason"`
		} `json:"delta"`
		Usage json.RawMessage `json:"usage"`
	}
	var text, thinking, sig strings.Builder
	args := map[int]*strings.Builder{}
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var ev event
		if err := json.Unmarshal(data, &ev); err != nil {
			return 0, 0, err
		}
		switch ev.Delta.Type {
		case "text_delta":
			text.WriteString(ev.Delta.Text)
		case "thinking_delta":
			thinking.WriteString(ev.Delta.Thinking)
		case "signature_delta":
			sig.WriteString(ev.Delta.Signature)
		case "input_json_delta":
			if args[ev.Index] == nil {
				args[ev.Index] = &strings.Builder{}
			}
			args[ev.Index].WriteString(ev.Delta.PartialJSON)
		}
	}
	for _, a := range args {
		argsLen += a.Len()
	}
	return text.Len(), argsLen, sc.Err()
}

// BenchmarkStreamDecode decodes the same recorded-shape stream with the
// adapter and with the bare SSE + encoding/json loop, interleaved (the
// one that goes first alternating every iteration) so both see the same
// machine state, and reports each one's ns/op and their ratio
// (adapter/baseline):
//
//	go test ./agent/anthropic -run '^$' -bench StreamDecode -benchtime 200x
func BenchmarkStreamDecode(b *testing.B) {
	stream := benchStream()
	wantText, wantArgs, err := decodeBaseline(stream)
	if err != nil {
		b.Fatal(err)
	}
	if gotText, gotArgs, err := decodeAdapter(stream); err != nil || gotText != wantText || gotArgs != wantArgs {
		b.Fatalf("the two decoders disagree: adapter %d/%d (%v), baseline %d/%d", gotText, gotArgs, err, wantText, wantArgs)
	}
	b.ReportAllocs()
	benchbase.Interleave(b,
		benchbase.Part{Name: "adapter", Run: func() {
			if _, _, err := decodeAdapter(stream); err != nil {
				b.Fatal(err)
			}
		}},
		benchbase.Part{Name: "baseline", Run: func() {
			if _, _, err := decodeBaseline(stream); err != nil {
				b.Fatal(err)
			}
		}})
}
