package lsp

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a fake language server: run with
// HARNESS_LSP_FAKE set to a mode, it speaks LSP on its standard input
// and output instead of running tests.
//
//	hang-init  never answers initialize
//	hang       initializes (with pull diagnostics), then answers nothing
//	env        initializes, writes its environment to the file named by
//	           HARNESS_LSP_FAKE_OUT, and reports no diagnostics
//	deaf       initializes, then stops reading its input
//	echo       pushes, for every opened or changed document, one error
//	           per line that contains "ERROR", at that line
func TestMain(m *testing.M) {
	if mode := os.Getenv("HARNESS_LSP_FAKE"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeServer(mode string) {
	r := bufio.NewReader(os.Stdin)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_ = writeMessage(os.Stdout, b)
	}
	if mode == "env" {
		_ = os.WriteFile(os.Getenv("HARNESS_LSP_FAKE_OUT"), []byte(strings.Join(os.Environ(), "\n")), 0o600)
	}
	for {
		body, err := readMessage(r, 64<<20)
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		switch {
		case m.Method == "initialize":
			if mode == "hang-init" {
				continue
			}
			caps := map[string]any{"textDocumentSync": 1, "positionEncoding": "utf-8"}
			if mode == "hang" {
				caps["diagnosticProvider"] = map[string]any{"interFileDependencies": false, "workspaceDiagnostics": false}
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"capabilities": caps}})
			if mode == "deaf" {
				time.Sleep(time.Hour)
			}
		case m.Method == "shutdown":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
		case m.Method == "exit":
			return
		case mode == "hang":
			// Requests after initialize go unanswered.
		case m.Method == "textDocument/didOpen" || m.Method == "textDocument/didChange":
			var p struct {
				TextDocument struct {
					URI     string `json:"uri"`
					Text    string `json:"text"`
					Version int    `json:"version"`
				} `json:"textDocument"`
				ContentChanges []struct {
					Text string `json:"text"`
				} `json:"contentChanges"`
			}
			_ = json.Unmarshal(m.Params, &p)
			text := p.TextDocument.Text
			if len(p.ContentChanges) > 0 {
				text = p.ContentChanges[0].Text
			}
			if mode != "echo" {
				continue
			}
			var diags []map[string]any
			for i, line := range strings.Split(text, "\n") {
				if j := strings.Index(line, "ERROR"); j >= 0 {
					diags = append(diags, map[string]any{
						"range":    map[string]any{"start": map[string]any{"line": i, "character": j}, "end": map[string]any{"line": i, "character": j + 5}},
						"severity": 1, "source": "fake", "message": "found " + strings.TrimSpace(line[j:]),
					})
				}
			}
			if diags == nil {
				diags = []map[string]any{}
			}
			time.Sleep(20 * time.Millisecond)
			send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
				"params": map[string]any{"uri": p.TextDocument.URI, "version": p.TextDocument.Version, "diagnostics": diags}})
		case len(m.ID) > 0:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": codeMethodNotFound, "message": "no"}})
		}
	}
}
