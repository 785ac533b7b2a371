package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// lightModules are the only modules besides the standard library and
// this one that the agent package may compile. A host that embeds the
// loop pays for every package in this graph on its first build and at
// every start (package initialisation), so a heavy dependency belongs
// behind the package that needs it: a provider SDK in its adapter, HTML
// parsing in the web tools, OpenTelemetry in observe, database and
// object-store drivers in their stores, MCP in tools/mcp.
var lightModules = []string{
	"github.com/go-harness/harness",
	"github.com/google/jsonschema-go", // tool schemas (tools, schemaguard)
	"golang.org/x/net",                // idna, for web permission rules
	"golang.org/x/sys",                // unix, for checkpoint
	"golang.org/x/text",               // idna's tables
	"mvdan.cc/sh/v3",                  // the bash parser of tools/permission
}

// openAIModules are what agent/openai adds: the openai-go client and
// the modules it imports. The quickstart may compile them (it runs live
// on an OpenAI-compatible endpoint); agent may not.
var openAIModules = []string{
	"github.com/openai/openai-go/v3",
	"github.com/coder/websocket",
	"github.com/tidwall/gjson",
	"github.com/tidwall/match",
	"github.com/tidwall/pretty",
	"github.com/tidwall/sjson",
}

// heavyModules are modules that once were, or easily could be, pulled
// into a light graph; each is named as such in the failure, so the
// message says what came back.
var heavyModules = []string{
	"github.com/openai/openai-go",
	"github.com/anthropics/anthropic-sdk-go",
	"codeberg.org/readeck/go-readability",
	"github.com/JohannesKaufmann/html-to-markdown",
	"go.opentelemetry.io/otel",
	"github.com/jackc/pgx",
	"github.com/minio/minio-go",
	"github.com/modelcontextprotocol/go-sdk",
}

// TestImportGraph keeps the agent package and the quickstart light: agent
// compiles no module outside lightModules, the quickstart none outside
// lightModules and openAIModules; in particular no other provider's SDK,
// no HTML parsing, OpenTelemetry, database, object-store or MCP client.
func TestImportGraph(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the import graph with")
	}
	for pkg, allowed := range map[string][]string{
		"github.com/go-harness/harness/agent": lightModules,
		".":                                   slices.Concat(lightModules, openAIModules),
	} {
		out, err := exec.Command(goTool, "list", "-deps",
			"-f", "{{if not .Standard}}{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		seen := 0
		outside := map[string][]string{} // module: its packages compiled
		for line := range strings.Lines(string(out)) {
			imp, mod, _ := strings.Cut(strings.TrimSpace(line), " ")
			if imp == "" {
				continue
			}
			seen++
			if !slices.Contains(allowed, mod) {
				outside[mod] = append(outside[mod], imp)
			}
		}
		for _, mod := range slices.Sorted(maps.Keys(outside)) {
			imps := outside[mod]
			what := "a module it may not use (see lightModules)"
			for _, h := range heavyModules {
				if strings.HasPrefix(mod, h) {
					what = "a heavy dependency: import it only from the package that needs it"
				}
			}
			t.Errorf("%s compiles %d package(s) of %s, %s; first %s", pkg, len(imps), mod, what, imps[0])
		}
		if seen == 0 {
			t.Fatalf("go list -deps %s listed no package outside the standard library:\n%s", pkg, out)
		}
	}
}
