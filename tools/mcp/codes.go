package mcp

import "github.com/go-harness/harness"

// The codes only this package reports, besides the shared ones of the
// harness package. Their text is public API like every code's: match
// one with errors.Is(err, harness.Code("...")) or compare ToolResult.Code.
const (
	// codeInvalidConfig (invalid_config): an MCP server configuration (a
	// .mcp.json file) is malformed; the message names the bad field.
	codeInvalidConfig harness.Code = "invalid_config"
	// codeServerUnavailable (server_unavailable): an MCP server could not be started or
	// reached, stopped while serving, or failed too often to restart.
	codeServerUnavailable harness.Code = "server_unavailable"
	// codeUnknownServer (unknown_server): no connected MCP server has that name.
	codeUnknownServer harness.Code = "unknown_server"
)
