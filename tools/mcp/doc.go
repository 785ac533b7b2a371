// Package mcp makes the tools of Model Context Protocol servers tools of
// the loop, through the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// [Connect] starts or reaches the servers of a [Config] at once: a command
// over stdio (with its arguments, environment and working directory), a
// streamable HTTP endpoint (with headers), or any SDK transport the
// program builds ([Server].Transport, such as an in-process server over
// the in-memory transport). Each has a connect timeout for the start, the
// handshake and the first tool listing. [ParseConfig] and [LoadConfig]
// read the format of .mcp.json files ({"mcpServers": {...}}), with
// ${VAR} expansion and errors that name the bad field, into the Servers
// of a Config; its other fields (timeouts, the restart limit, a logger,
// an event function) are the host's, each zero value meaning the default:
//
//	cfg, err := mcp.LoadConfig(".mcp.json")
//	cfg.Logger, cfg.Events = logger, onEvent
//	set, err := mcp.Connect(ctx, cfg)
//	loop, err := agent.New(agent.WithToolSource(set), ...)
//
// Connect returns a [Set]: the tools.Source of the servers' tools, with
// their status, their prompts and Close.
//
// Tools returns every server tool as a tools.Tool named
// mcp__<server>__<tool>, which is what permission rules match
// (mcp__github__*). Names keep the server's spelling where providers
// accept it (letters, digits, '_' and '-'; anything else becomes '_'); a
// name longer than 64 characters, or one another tool already has, is
// shortened and given a hash suffix of the original names, so two tools
// never share a name and a tool keeps its name for the life of the set.
// The input schema is sent as the server wrote it, byte for byte (only
// whitespace is compacted), so the request prefix stays cacheable.
// Annotations become the dispatcher's declarations: a readOnlyHint tool is
// concurrency-safe and has no side effects; any other tool (destructive,
// open-world, or unannotated) has side effects and runs alone. Tools of an
// HTTP server, or annotated open-world, belong to the network family for
// default deadlines; the others to the process family.
//
// Results reach the model as text: text content as it is; images stored in
// the session's attachment store after the checks and downscaling
// read_image applies, when the model accepts image input (otherwise a line
// says what was left out); embedded resources and resource links as text
// with their URIs; structuredContent as compact JSON unless a text block
// already says the same; isError as an error result. Large results are
// spilled by the loop's spill middleware like any tool's. Protocol
// metadata never reaches the model.
//
// When a connected server offers resources, the set adds
// mcp_list_resources(server?) and mcp_read_resource(server, uri). Prompts
// lists a server's prompts (as the SDK's sdk.Prompt) for the host; the
// model is not told about them.
//
// A cancelled call sends the protocol's cancel notification, and the
// server's progress notifications become the call's own progress reports
// (tools.Call.OnProgress). Connections, crashes, changed tool lists and
// skipped tools reach the host as [Event] values (Config.Events). A
// tools/list_changed notification refreshes the server's tools in the
// background; Tools then returns the tools it kept in their places and
// new ones at the end, and Generation changes, so a loop that asks
// between steps (agent.WithToolSource) never changes its tools within a
// step. A server that stops gives the running call an error result that
// says its outcome is unknown, and is started again on the next call of
// one of its tools, at most Config.MaxRestarts times (3 by default). Close
// stops every server: a stdio server runs in a process group of its own,
// and one that ignores the end of its input is sent SIGTERM and then
// killed after Config.TerminateDuration (one second by default).
//
// Failures are *harness.Error values: "invalid_config" for a bad
// configuration, harness.CodeInvalidOption for a negative timeout,
// "server_unavailable" for a server that could not be started or
// stopped, "unknown_server" for a resource call or Prompts naming no
// server (the package's own codes have no constant: match them with
// harness.Code("unknown_server")), harness.CodeToolFailed for a tool's
// own failure.
//
// It imports harness, tools, tools/images (image checks), internal helpers
// and the MCP SDK; nothing of agent, session or spill.
package mcp
