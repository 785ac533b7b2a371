package mcp_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/mcp"
)

// A configuration in the format of .mcp.json files.
func ExampleParseConfig() {
	cfg, err := mcp.ParseConfig([]byte(`{"mcpServers": {
		"files": {"command": "mcp-server-filesystem", "args": ["."]},
		"web": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${MCP_TOKEN:-none}"}}
	}}`))
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range cfg.Servers {
		fmt.Println(s.Name, s.Command, s.Args, s.URL, s.Headers)
	}
	// Output:
	// files mcp-server-filesystem [.]  map[]
	// web  [] https://mcp.example.com/mcp map[Authorization:Bearer none]
}

// An in-process server's tools as tools of the loop.
func ExampleConnect() {
	server := sdk.NewServer(&sdk.Implementation{Name: "greeter", Version: "1"}, nil)
	type in struct {
		Name string `json:"name"`
	}
	sdk.AddTool(server, &sdk.Tool{Name: "greet", Description: "Greet someone."},
		func(_ context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Hello, " + args.Name + "!"}}}, nil, nil
		})
	inProcess := mcp.Server{Name: "greeter", Transport: func(ctx context.Context) (sdk.Transport, error) {
		serverSide, clientSide := sdk.NewInMemoryTransports()
		if _, err := server.Connect(ctx, serverSide, nil); err != nil {
			return nil, err
		}
		return clientSide, nil
	}}

	ctx := context.Background()
	set, err := mcp.Connect(ctx, &mcp.Config{Servers: []mcp.Server{inProcess}})
	if err != nil {
		log.Fatal(err)
	}
	defer set.Close()

	model := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "mcp__greeter__greet", map[string]string{"name": "Ada"})),
		replay.Response{Text: "done"},
	)
	loop, err := agent.New(agent.WithModel(model), agent.WithToolSource(set))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for ev, err := range s.Run(ctx, "greet Ada") {
		if err != nil {
			log.Fatal(err)
		}
		if end, ok := ev.(*agent.ToolCallEnd); ok {
			fmt.Println(end.Call.Name, "→", end.Result.Text())
		}
	}
	// Output:
	// mcp__greeter__greet → Hello, Ada!
}
