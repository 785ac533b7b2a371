package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/tools/mcp"
)

// mcpFlags are the coder's MCP settings.
type mcpFlags struct {
	file string
}

func (m *mcpFlags) register(fset *flag.FlagSet) {
	fset.StringVar(&m.file, "mcp", "", "MCP servers in a `file` of the .mcp.json format (default the workspace's .mcp.json, when there is one)")
}

// workspaceMCP is the configuration file looked for in the workspace.
const workspaceMCP = ".mcp.json"

// connectMCP connects the MCP servers of -mcp, or of the workspace's
// .mcp.json, and returns the set (empty when there are none) with the
// lines to show at start. A broken -mcp file is a usage error; a broken
// workspace file is reported and skipped.
func (a *app) connectMCP(ctx context.Context, logger *slog.Logger) (mcp.Set, []string, error) {
	path, explicit := a.o.mcp.file, a.o.mcp.file != ""
	if !explicit {
		path = filepath.Join(a.root, workspaceMCP)
	}
	cfg := &mcp.Config{}
	var notes []string
	if _, err := os.Stat(path); explicit || err == nil {
		c, err := mcp.LoadConfig(path)
		switch {
		case err != nil && explicit:
			return nil, nil, usagef("%v", err)
		case err != nil:
			notes = append(notes, "! "+err.Error()+" (MCP servers skipped)")
		default:
			cfg = c
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		notes = append(notes, fmt.Sprintf("! mcp: %v (MCP servers skipped)", err))
	}
	for i := range cfg.Servers {
		if cfg.Servers[i].Command != "" && cfg.Servers[i].Dir == "" {
			// Stdio servers run in the workspace, as the agent's
			// commands do.
			cfg.Servers[i].Dir = a.root
		}
	}
	cfg.Logger, cfg.Events = logger, a.mcpEvents.Event
	set, err := mcp.Connect(ctx, cfg)
	if set == nil {
		return nil, nil, err
	}
	return set, append(notes, ui.MCPStatus(set)...), nil
}
