package main

import (
	"flag"
	"log/slog"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/lsp"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/web"
)

// braveKeyEnv is the environment variable the Brave Search API key is
// read from; web_search is offered only when it is set.
const braveKeyEnv = "BRAVE_SEARCH_API_KEY"

// webFlags are the flags of the web tools and of the diagnostics after
// edits.
type webFlags struct {
	web         bool
	diagnostics bool
}

func (w *webFlags) register(fset *flag.FlagSet) {
	fset.BoolVar(&w.web, "web", true, "give the model web_fetch (public addresses; a loopback or private host only with -allow 'WebFetch(domain:HOST)'), and web_search when "+braveKeyEnv+" is set")
	fset.BoolVar(&w.diagnostics, "diagnostics", true, "after write and edit, show the model the problems its change introduced, from a language server found on PATH (gopls, pyright, typescript-language-server, rust-analyzer)")
}

// webTools returns web_fetch, and web_search when env holds a Brave
// Search API key. pol is the session's permission policy: web_fetch asks
// its WebFetch rules about every host a redirect leads to, and reaches a
// loopback or private address only for a host an allow rule names
// exactly (-allow 'WebFetch(domain:127.0.0.1)'). search reports whether
// web_search is among the tools.
func webTools(env func(string) string, pol *permission.Policy) (ts []tools.Tool, search bool, err error) {
	fetch, err := web.Fetch(web.FetchConfig{Policy: pol})
	if err != nil {
		return nil, false, err
	}
	ts = append(ts, fetch)
	key := strings.TrimSpace(env(braveKeyEnv))
	if key == "" {
		return ts, false, nil
	}
	brave, err := web.Brave(web.BraveConfig{Key: key})
	if err != nil {
		return nil, false, err
	}
	s, err := web.Search(web.SearchConfig{Searcher: brave, Name: "Brave Search"})
	if err != nil {
		return nil, false, err
	}
	return append(ts, s), true, nil
}

// webPrompt is the line of the system prompt about the web tools.
func webPrompt(search bool) string {
	s := "\n- Read web pages (documentation, issues, release notes) with web_fetch; give it a prompt saying what you look for, and read the sections it points to."
	if search {
		s += " Find pages with web_search first when you do not know the URL."
	}
	return s
}

// diagnostics returns the language-server diagnostics for write and
// edit. Its middleware goes between spill and deadlines in the loop's
// dispatch chain; close it when the loop is closed. With a sandbox for
// commands, servers that run programs of the workspace (outside the
// sandbox) are left out.
func diagnostics(logger *slog.Logger, sandboxed bool) (*lsp.Manager, error) {
	var servers []lsp.Server
	for _, s := range lsp.DefaultServers() {
		if sandboxed && s.RunsWorkspaceCode {
			continue
		}
		servers = append(servers, s)
	}
	return lsp.New(lsp.Config{Servers: servers, Logger: logger})
}

// diagnosticsNote is what the card of a write or edit shows under its
// diff: the diagnostics the change introduced, or "" when the result has
// none.
func diagnosticsNote(res *harness.ToolResult) string {
	return lsp.Note(res)
}
