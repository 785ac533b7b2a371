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
	"strings"
	"sync"

	"github.com/go-harness/harness/internal/units"
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
	cfg.Logger, cfg.Events = logger, a.mcpEvents.event
	set, err := mcp.Connect(ctx, cfg)
	if set == nil {
		return nil, nil, err
	}
	return set, append(notes, mcpStatus(set)...), nil
}

// mcpStatus is one line per server: its tools, or why it is not there.
func mcpStatus(set mcp.Set) []string {
	var out []string
	for _, st := range set.Status() {
		if !st.Connected {
			msg := "not connected"
			if st.Err != nil {
				msg = st.Err.Error()
			}
			out = append(out, fmt.Sprintf("! mcp %s: %s", st.Name, strings.TrimPrefix(msg, "mcp: ")))
			continue
		}
		line := fmt.Sprintf("mcp %s (%s): %s", st.Name, st.Transport, units.Plural(st.Tools, "tool", "tools"))
		if st.Resources {
			line += ", resources"
		}
		out = append(out, line)
	}
	return out
}

// showMCP prints the start-up lines of connectMCP.
func (a *app) showMCP(lines []string) {
	for _, l := range lines {
		if rest, warn := strings.CutPrefix(l, "! "); warn {
			a.view.notice(noticeWarn, rest)
			continue
		}
		a.view.notice(noticeInfo, l)
	}
}

// mcpEvents shows what happens to the MCP servers while the coder runs,
// one dim status line each: a server connecting again, failing, stopping,
// its tools changing or one of them skipped. Events come from the
// servers' goroutines; those before the view is attached (the first
// connections, which the start-up lines sum up) and after it is
// detached are not shown.
type mcpEvents struct {
	mu sync.Mutex
	v  view
}

// attach starts showing events on v; nil stops.
func (m *mcpEvents) attach(v view) {
	m.mu.Lock()
	m.v = v
	m.mu.Unlock()
}

func (m *mcpEvents) event(e mcp.Event) {
	m.mu.Lock()
	defer m.mu.Unlock() // one line at a time, never after detach
	if m.v != nil {
		m.v.notice(noticeInfo, mcpEventLine(e))
	}
}

// mcpEventLine is the status line of an MCP event.
func mcpEventLine(e mcp.Event) string {
	why := ""
	if e.Err != nil {
		why = oneLine(strings.TrimPrefix(e.Err.Error(), "mcp: "))
	} else if e.Message != "" {
		why = oneLine(e.Message)
	}
	head := "mcp " + e.Server + ": "
	switch e.Kind {
	case mcp.EventConnected:
		if e.Message != "" {
			return head + "connected (" + oneLine(e.Message) + ")"
		}
		return head + "connected"
	case mcp.EventConnectFailed:
		return head + "connecting failed: " + why
	case mcp.EventStopped:
		return head + "stopped (" + why + "), restarts on its next call"
	case mcp.EventToolsChanged:
		if e.Message != "" {
			return head + "tools changed (" + oneLine(e.Message) + ")"
		}
		return head + "tools changed"
	case mcp.EventToolSkipped:
		return head + "tool " + e.Tool + " skipped: " + why
	}
	if why == "" {
		return head + string(e.Kind)
	}
	return head + string(e.Kind) + ": " + why
}
