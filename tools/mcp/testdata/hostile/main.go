// Command hostile is an MCP server over stdio that misbehaves in every
// way the tests of package mcp guard against: a tool whose input schema
// has a $ref cycle, one with a 5 MB schema, results larger than the 16
// MiB a message may be decoded in, a grandchild that starts a session of
// its own and ignores SIGTERM, lines on standard output that are not
// JSON-RPC, and a crash in the middle of a call. The tests build it with
// go build.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// CyclicSchema is the input schema with a $ref cycle (a -> b -> a).
const CyclicSchema = `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`

// Lines writes n bytes of numbered lines, the text the big tools return
// and the tests compare with what was kept.
func Lines(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %09d of a large result\n", i)
	}
	return b.String()[:n]
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func schema(props string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
}

// hugeSchema is a valid object schema of about 5 MB.
func hugeSchema() json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field_%d":{"type":"string","description":%q}`, i, strings.Repeat("d", 1000))
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

func main() {
	resourceBytes := flag.Int("resource-bytes", 17<<20, "the size of the text of hostile://big")
	noHugeSchema := flag.Bool("no-huge-schema", false, "leave out the tool with the 5 MB schema")
	flag.Parse()
	s := sdk.NewServer(&sdk.Implementation{Name: "hostile", Version: "1.0.0"}, &sdk.ServerOptions{})
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Say the text back.", InputSchema: schema(`"text":{"type":"string"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return text(in.Text), nil
		})
	s.AddTool(&sdk.Tool{Name: "cyclic", Description: "A tool whose schema refers to itself forever.", InputSchema: json.RawMessage(CyclicSchema)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("cyclic ran"), nil
		})
	if !*noHugeSchema {
		s.AddTool(&sdk.Tool{Name: "huge_schema", Description: "A tool with a 5 MB schema.", InputSchema: hugeSchema()},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("huge ran"), nil })
	}
	s.AddTool(&sdk.Tool{Name: "big", Description: "Return n bytes of numbered lines.", InputSchema: schema(`"n":{"type":"integer"},"structured":{"type":"boolean"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct {
				N          int
				Structured bool
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			r := text(Lines(in.N))
			if in.Structured {
				r.StructuredContent = map[string]any{"lines": Lines(in.N)}
			}
			return r, nil
		})
	s.AddTool(&sdk.Tool{Name: "big_image", Description: "Return a short text and n bytes of image data.", InputSchema: schema(`"n":{"type":"integer"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ N int }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			data := make([]byte, in.N)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a picture:"}, &sdk.ImageContent{Data: data, MIMEType: "image/png"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "garbage", Description: "Write lines that are not JSON-RPC, then answer.", InputSchema: schema("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			os.Stdout.WriteString("this is not JSON\n{\"not\": \"json-rpc\"}\n[1, 2\n\n")
			return text("after the garbage"), nil
		})
	s.AddTool(&sdk.Tool{Name: "crash", Description: "Exit in the middle of the call.", InputSchema: schema("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "spawn", Description: "Start a grandchild that starts its own session and ignores SIGTERM; tag names it.", InputSchema: schema(`"tag":{"type":"string"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Tag string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			cmd := exec.Command("bash", "-c", `trap "" TERM; exec -a "$TAG" sleep 300`)
			cmd.Env = append(os.Environ(), "TAG="+in.Tag)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			go cmd.Wait()
			return text(fmt.Sprintf("spawned %d", cmd.Process.Pid)), nil
		})
	s.AddResource(&sdk.Resource{URI: "hostile://big", Name: "big", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: Lines(*resourceBytes)}}}, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{MaxLineLength: -1}); err != nil {
		log.Print(err)
	}
}
