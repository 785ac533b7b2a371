package mcp_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/benchbase"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/mcp"
)

// BenchmarkConnect: connecting to server-everything over stdio (start,
// handshake, tool listing, close) through Connect, beside the same steps
// with the SDK client alone.
func BenchmarkConnect(b *testing.B) {
	srv := everything(b)
	ctx := context.Background()
	b.Run("sdk_direct", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(srv.Command, srv.Args...)
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
				Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 1e9}, nil)
			if err != nil {
				b.Fatal(err)
			}
			for _, err := range cs.Tools(ctx, nil) {
				if err != nil {
					b.Fatal(err)
				}
			}
			_ = cs.Close()
		}
	})
	b.Run("connect", func(b *testing.B) {
		for b.Loop() {
			set, err := mcp.Connect(ctx, &mcp.Config{Servers: []mcp.Server{srv}})
			if err != nil {
				b.Fatal(err)
			}
			_ = set.Close()
		}
	})
}

// BenchmarkCall: one call of a trivial tool (echo) made through the
// tool's Execute (with the result mapped), directly with the SDK client,
// and through the loop (a one-call turn of a scripted model, logged in
// the memory store), interleaved in one loop (the one that goes first
// rotating), against the in-process server and against
// server-everything over stdio. It reports each one's ns/op, "ratio"
// (execute/sdk_direct) and "loop-ratio" (loop/sdk_direct):
//
//	go test ./tools/mcp -run '^$' -bench BenchmarkCall -benchtime 300x
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	inMemory := newInProcess(b).server("test")
	servers := []struct {
		name, tool string
		args       map[string]any
		server     func(b *testing.B) mcp.Server
	}{
		{"in_memory", "echo", map[string]any{"text": "hi"}, func(*testing.B) mcp.Server { return inMemory }},
		{"everything_stdio", "echo", map[string]any{"message": "hi"}, func(b *testing.B) mcp.Server { return everything(b) }},
	}
	for _, s := range servers {
		b.Run(s.name, func(b *testing.B) {
			cfg := s.server(b)
			set, err := mcp.Connect(ctx, &mcp.Config{Servers: []mcp.Server{cfg}})
			if err != nil {
				b.Fatal(err)
			}
			defer set.Close()
			name := "mcp__" + cfg.Name + "__" + s.tool
			tool := byName(set.Tools())[name]
			raw, _ := json.Marshal(s.args)

			cs := directSession(b, cfg)
			defer cs.Close()
			e := env(false)
			llm := replay.NewScripted()
			loop, err := agent.New(agent.WithModel(llm), agent.WithToolSource(set))
			if err != nil {
				b.Fatal(err)
			}
			defer loop.Close()
			total := benchbase.Interleave(b,
				benchbase.Part{Name: "execute", Run: func() {
					if res := callB(ctx, tool, e, raw); res.IsError {
						b.Fatal(res.Text())
					}
				}},
				benchbase.Part{Name: "sdk_direct", Run: func() {
					if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: s.tool, Arguments: json.RawMessage(raw)}); err != nil {
						b.Fatal(err)
					}
				}},
				benchbase.Part{Name: "loop", Run: func() {
					llm.Push(replay.Call(replay.ToolCall("c1", name, s.args)), replay.Response{Text: "ok"})
					sess, err := loop.NewSession(ctx, session.Header{})
					if err != nil {
						b.Fatal(err)
					}
					for _, err := range sess.Run(ctx, "go") {
						if err != nil {
							b.Fatal(err)
						}
					}
					_ = sess.Close()
				}})
			b.ReportMetric(benchbase.Ratio(total[2], total[1]), "loop-ratio")
		})
	}
}

// callB runs a tool as the dispatcher would, for benchmarks.
func callB(ctx context.Context, tool tools.Tool, e *tools.Env, raw json.RawMessage) *harness.ToolResult {
	res, err := tool.Execute(ctx, &tools.Call{ID: "c", Name: tool.Spec().Name, Arguments: string(raw), Env: e})
	if err != nil {
		return &harness.ToolResult{IsError: true, Content: []harness.Block{harness.TextBlock(err.Error())}}
	}
	return res
}

// directSession connects the SDK client alone to the server cfg names.
func directSession(b *testing.B, cfg mcp.Server) *sdk.ClientSession {
	var tr sdk.Transport
	if cfg.Transport != nil {
		t, err := cfg.Transport(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		tr = t
	} else {
		tr = &sdk.CommandTransport{Command: exec.Command(cfg.Command, cfg.Args...), TerminateDuration: 1e9}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}
