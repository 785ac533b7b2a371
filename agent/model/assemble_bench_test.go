package model_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-harness/harness/agent/model"
)

// writeArgs returns the arguments of a write call whose content is about
// size bytes, and the chunks that stream them in pieces of delta bytes.
func writeArgs(size, delta int) (string, []model.Chunk) {
	content := strings.Repeat("0123456789abcdef", size/16)
	args := `{"file_path":"/w/big.txt","content":"` + content + `"}`
	chunks := []model.Chunk{{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, ID: "call_1", Name: "write"}}}
	for i := 0; i < len(args); i += delta {
		chunks = append(chunks, model.Chunk{Type: model.ChunkToolCall, ToolCall: model.ToolCallDelta{Index: 0, Arguments: args[i:min(i+delta, len(args))]}})
	}
	return args, append(chunks, model.Chunk{Type: model.ChunkFinish, Finish: model.FinishToolCalls})
}

// BenchmarkAssembleArguments assembles one streamed write call of 1 MB and
// 10 MB in 4-byte and 4 KiB deltas, beside a bare strings.Builder doing
// the same appends (the floor a linear assembler can reach). Compare the
// MB/s of the two in one run.
func BenchmarkAssembleArguments(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		for _, delta := range []int{4, 4 << 10} {
			args, chunks := writeArgs(size, delta)
			name := fmt.Sprintf("%dMB/delta=%d", size>>20, delta)
			b.Run(name+"/assembler", func(b *testing.B) {
				b.SetBytes(int64(len(args)))
				b.ReportAllocs()
				for b.Loop() {
					var a model.Assembler
					for _, c := range chunks {
						a.Add(c)
					}
					if got := a.Message().ToolCalls()[0].Arguments; len(got) != len(args) {
						b.Fatalf("assembled %d bytes, want %d", len(got), len(args))
					}
				}
			})
			b.Run(name+"/builder", func(b *testing.B) {
				b.SetBytes(int64(len(args)))
				b.ReportAllocs()
				for b.Loop() {
					var sb strings.Builder
					for _, c := range chunks {
						sb.WriteString(c.ToolCall.Arguments)
					}
					if sb.Len() != len(args) {
						b.Fatalf("built %d bytes, want %d", sb.Len(), len(args))
					}
				}
			})
		}
	}
}
