package ui

import (
	"fmt"
	"strings"
	"sync"

	"github.com/go-harness/harness/tools/mcp"
)

// MCPStatus is one line per server: its tools, or why it is not there.
func MCPStatus(set mcp.Set) []string {
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
		line := fmt.Sprintf("mcp %s (%s): %s", st.Name, st.Transport, plural(st.Tools, "tool", "tools"))
		if st.Resources {
			line += ", resources"
		}
		out = append(out, line)
	}
	return out
}

// ShowStatus shows the start-up lines of the MCP servers (MCPStatus, and
// the coder's own notes): a line starting with "! " as a warning, the
// others as information.
func ShowStatus(v View, lines []string) {
	for _, l := range lines {
		if rest, warn := strings.CutPrefix(l, "! "); warn {
			v.Notice(NoticeWarn, rest)
			continue
		}
		v.Notice(NoticeInfo, l)
	}
}

// MCPEvents shows what happens to the MCP servers while the coder runs,
// one dim status line each: a server connecting again, failing, stopping,
// its tools changing or one of them skipped. Events come from the
// servers' goroutines; those before the view is attached (the first
// connections, which the start-up lines sum up) and after it is
// detached are not shown.
type MCPEvents struct {
	mu sync.Mutex
	v  View
}

// attach starts showing events on v; nil stops.
func (m *MCPEvents) Attach(v View) {
	m.mu.Lock()
	m.v = v
	m.mu.Unlock()
}

func (m *MCPEvents) Event(e mcp.Event) {
	m.mu.Lock()
	defer m.mu.Unlock() // one line at a time, never after detach
	if m.v != nil {
		m.v.Notice(NoticeInfo, mcpEventLine(e))
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
