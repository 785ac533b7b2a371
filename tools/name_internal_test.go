package tools

import (
	"regexp"
	"testing"
)

// The tool-name checks are loops, so that importing the package compiles
// no regular expression; these are the expressions they implement.
var (
	toolNameRE    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	mcpToolNameRE = regexp.MustCompile(`^mcp__[A-Za-z0-9_-]{1,59}$`)
)

func TestToolNameChecks(t *testing.T) {
	long := func(prefix string, n int) string {
		b := []byte(prefix)
		for len(b) < n {
			b = append(b, 'a')
		}
		return string(b)
	}
	for _, tc := range []struct {
		name      string
		tool, mcp bool
	}{
		{"read", true, false},
		{"web_fetch", true, false},
		{"a", true, false},
		{"a1_", true, false},
		{long("a", 64), true, false},
		{long("a", 65), false, false},
		{"", false, false},
		{"Read", false, false},
		{"1read", false, false},
		{"_read", false, false},
		{"read-file", false, false},
		{"read\n", false, false},
		{"rеad", false, false}, // Cyrillic e
		{"mcp__github__create_issue", true, true},
		{"mcp__My-Server__Tool", false, true},
		{"mcp__", true, false},
		{"mcp___", true, true},
		{long("mcp__", 64), true, true},
		{long("mcp__", 65), false, false},
		{"mcp__a-" + long("", 58), false, false},
		{"mcp__srv__to ol", false, false},
		{"MCP__srv__tool", false, false},
	} {
		if got := isToolName(tc.name); got != tc.tool {
			t.Errorf("isToolName(%q) = %v, want %v", tc.name, got, tc.tool)
		}
		if got := isMCPToolName(tc.name); got != tc.mcp {
			t.Errorf("isMCPToolName(%q) = %v, want %v", tc.name, got, tc.mcp)
		}
	}
}

// FuzzToolNameChecks holds the loops to the regular expressions they
// replace.
func FuzzToolNameChecks(f *testing.F) {
	for _, s := range []string{"read", "mcp__srv__tool", "mcp__", "A", "a\n", "mcp__x\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := isToolName(name), toolNameRE.MatchString(name); got != want {
			t.Fatalf("isToolName(%q) = %v, the expression says %v", name, got, want)
		}
		if got, want := isMCPToolName(name), mcpToolNameRE.MatchString(name); got != want {
			t.Fatalf("isMCPToolName(%q) = %v, the expression says %v", name, got, want)
		}
	})
}
