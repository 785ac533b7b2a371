package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// lightModules are the only modules besides the standard library and
// this one that the quickstart and the agent package may compile. A host
// that embeds the loop pays for every package in this graph on its first
// build and at every start (package initialisation), so a heavy
// dependency belongs behind the package that needs it: a provider SDK in
// its adapter, HTML parsing in the web tools, OpenTelemetry in observe,
// database and object-store drivers in their stores, MCP in tools/mcp.
var lightModules = []string{
	"github.com/go-harness/harness",
	"github.com/google/jsonschema-go", // tool schemas (tools, schemaguard)
	"golang.org/x/net",                // idna, for web permission rules
	"golang.org/x/sys",                // unix, for checkpoint
	"golang.org/x/text",               // idna's tables
	"mvdan.cc/sh/v3",                  // the bash parser of tools/permission
}

// heavyModules are modules that once were, or easily could be, pulled
// into the core graph; each is named in the failure so the message says
// what came back.
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

// TestImportGraph keeps the quickstart and the agent package light: they
// compile no module outside lightModules, in particular none of
// heavyModules.
func TestImportGraph(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the import graph with")
	}
	for _, pkg := range []string{".", "github.com/go-harness/harness/agent"} {
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
			if !slices.Contains(lightModules, mod) {
				outside[mod] = append(outside[mod], imp)
			}
		}
		for _, mod := range slices.Sorted(maps.Keys(outside)) {
			imps := outside[mod]
			what := "a module the core may not use (see lightModules)"
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
