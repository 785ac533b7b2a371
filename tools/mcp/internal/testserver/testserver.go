// Package testserver builds the MCP server the tests of package mcp talk
// to, in process and as a subprocess (testdata/server): one tool for each
// kind of content and behaviour a client has to handle.
//
// It imports only the MCP SDK.
package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoSchema is the input schema of the echo tool, in the server's key
// order (not sorted), to check that clients pass it through byte for byte.
const EchoSchema = `{"type":"object","properties":{"text":{"type":"string","description":"what to say back"},"count":{"type":"integer"}},"required":["text"],"additionalProperties":false}`

// Stats counts what the server saw.
type Stats struct {
	// Cancelled counts calls of slow whose context ended before they
	// finished (the client's cancel notification arrived).
	Cancelled atomic.Int64
	// Calls counts tool calls.
	Calls atomic.Int64
}

func textSchema(props string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
}

// PNG returns a small opaque PNG of w×h pixels.
func PNG(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / max(w, 1)), uint8(y * 255 / max(h, 1)), 128, 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// New returns the test server. crash, when not nil, is called by the
// crash tool (a subprocess exits; an in-process server closes its
// connection).
func New(stats *Stats, crash func()) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "harness-test-server", Version: "1.0.0"},
		&sdk.ServerOptions{Instructions: "A server for tests.", Capabilities: &sdk.ServerCapabilities{}})
	add := func(t *sdk.Tool, h sdk.ToolHandler) {
		s.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			stats.Calls.Add(1)
			return h(ctx, req)
		})
	}
	add(&sdk.Tool{Name: "echo", Description: "Say the text back.", InputSchema: json.RawMessage(EchoSchema),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "Echo"}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct {
				Text  string `json:"text"`
				Count int    `json:"count"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			out := in.Text
			for i := 1; i < in.Count; i++ {
				out += " " + in.Text
			}
			return text(out), nil
		})
	add(&sdk.Tool{Name: "image", Description: "Return a 64x48 PNG.", InputSchema: textSchema("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a picture:"}, &sdk.ImageContent{Data: PNG(64, 48), MIMEType: "image/png"}}}, nil
		})
	add(&sdk.Tool{Name: "resources", Description: "Return a resource link and embedded resources.", InputSchema: textSchema("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			size := int64(2048)
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.ResourceLink{URI: "test://docs/readme", Name: "readme", MIMEType: "text/markdown", Size: &size, Description: "The readme."},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://docs/note", MIMEType: "text/plain", Text: "note body"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://bin/blob", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3, 4}}},
				&sdk.AudioContent{Data: []byte("RIFF...."), MIMEType: "audio/wav"},
			}}, nil
		})
	add(&sdk.Tool{Name: "structured", Description: "Return structured content only.", InputSchema: textSchema("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"sum": 5, "terms": []int{2, 3}}}, nil
		})
	add(&sdk.Tool{Name: "structured_echoed", Description: "Return structured content and the same as text.", InputSchema: textSchema("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"sum": 5}`}}, StructuredContent: map[string]any{"sum": 5}}, nil
		})
	add(&sdk.Tool{Name: "structured_more", Description: "Return a summary and structured content with more in it.", InputSchema: textSchema("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Created issue 17."}},
				StructuredContent: map[string]any{"id": 17, "url": "https://issues.example/17"}}, nil
		})
	add(&sdk.Tool{Name: "fail", Description: "Fail as a tool does.", InputSchema: textSchema(""),
		Annotations: &sdk.ToolAnnotations{DestructiveHint: ptr(true)}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the disk is full"}}}, nil
		})
	add(&sdk.Tool{Name: "big", Description: "Return n bytes of text.", InputSchema: textSchema(`"n":{"type":"integer"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ N int }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			b := bytes.Repeat([]byte("0123456789abcdef\n"), in.N/17+1)
			return text(string(b[:in.N])), nil
		})
	add(&sdk.Tool{Name: "slow", Description: "Report progress, then wait until cancelled.", InputSchema: textSchema(""),
		Annotations: &sdk.ToolAnnotations{OpenWorldHint: ptr(true)}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 2; i++ {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 4, Message: "working"})
				}
			}
			select {
			case <-ctx.Done():
				stats.Cancelled.Add(1)
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return text("done"), nil
			}
		})
	add(&sdk.Tool{Name: "add_tool", Description: "Add the tool named by name.", InputSchema: textSchema(`"name":{"type":"string"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Name string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			s.AddTool(&sdk.Tool{Name: in.Name, Description: "Added at run time.", InputSchema: textSchema("")},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return text("added " + in.Name), nil
				})
			return text("added"), nil
		})
	add(&sdk.Tool{Name: "crash", Description: "Stop the server.", InputSchema: textSchema("")},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if crash != nil {
				crash()
			}
			<-ctx.Done()
			return nil, ctx.Err()
		})
	add(&sdk.Tool{Name: "env", Description: "Return the value of MCP_TEST_VALUE.", InputSchema: textSchema("")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(os.Getenv("MCP_TEST_VALUE")), nil
		})
	s.AddResource(&sdk.Resource{URI: "test://docs/readme", Name: "readme", MIMEType: "text/markdown", Description: "The readme."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "# Readme\nhello"}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review code.", Arguments: []*sdk.PromptArgument{{Name: "path", Required: true}}},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "review"}}}}, nil
		})
	return s
}

func ptr[T any](v T) *T { return &v }
