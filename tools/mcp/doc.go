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
// ${VAR} expansion and errors that name the bad field ("incomplete JSON
// at byte N" for a file cut short), into the Servers of a Config;
// LoadConfig reads only a regular file of at most 1 MiB, so a path that
// is a directory, a FIFO or a link to a device fails at once. The
// Config's other fields (timeouts, bounds, the restart limit, a logger,
// an event function) are the host's, each zero value meaning the
// default:
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
// (mcp__github__*, or mcp__github for all of a server's tools). Names
// keep the server's spelling where providers accept it (letters, digits,
// '_' and '-'; anything else becomes '_'); a name longer than 64
// characters, or one another tool already has, has its tool part
// shortened and given a hash suffix of the original names, so two tools
// never share a name and a tool keeps its name for the life of the set.
// So that a rule for one server never matches another server's tools, a
// server name is refused (invalid_config) when, written as in tool
// names, it holds "__", ends with '_', is longer than 40 characters, or
// is another server's: the server part of a name then always ends at
// the first "__" after mcp__.
//
// The input schema is sent as the server wrote it, byte for byte (only
// whitespace is compacted), so the request prefix stays cacheable. A
// tool is not offered when its schema is larger than
// Config.MaxSchemaBytes (32 KiB by default: it is sent with every
// request), or when the registry refuses it (not an object schema, a
// $ref cycle, nesting or patterns too large to check safely; see
// tools.SchemaError); an EventToolSkipped names the tool and why, and
// the server's other tools are offered. A description longer than 16
// KiB is cut. A server offers at most Config.MaxTools tools (128 by
// default): listing stops there, and one EventToolSkipped names the
// first tool left out.
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
// A server's answer is read in memory up to 16 MiB, the SDK's own
// bound, over stdio and over HTTP (a JSON answer, or one event of an
// event stream). The answer to a tool call that is larger is written to a
// temporary file as it arrives (up to Config.MaxResultBytes, 256 MiB by
// default, and cut there), and its text read from the file in pieces
// and saved whole to the session's output store (tools.Env.Output), so
// the model gets a preview, the spill:// locator and a line saying what
// happened; images and binary resources of such an answer are left out,
// and said to be. An answer that cannot be kept says so, truthfully, and
// the server goes on serving. A larger answer to anything else is an
// error, and a larger request or notification is dropped and logged; a
// line of a stdio server's output that is not JSON-RPC is skipped and
// logged.
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
// one of its tools, at most Config.MaxRestarts times (3 by default).
//
// Close stops every server. A stdio server's processes are contained as
// the shell tools contain commands: in a PID namespace of their own
// where the kernel allows it, otherwise followed as a process tree
// (descendants, and processes whose environment carries the server's
// marker), so that a stop reaches processes that started a session of
// their own and ignore SIGTERM. A server that does not exit when its
// input closes, and whatever it left running, is sent SIGTERM and then
// SIGKILL after Config.TerminateDuration (one second by default). The
// containment in force is in the connected event, the log and
// Status.Containment; Close returns an error matching
// harness.CodeNotStopped naming any process that outlived it. Stdio
// servers on a system that is not Unix-like run uncontained.
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
