package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-harness/harness"
)

// FuzzRenderTranscript: any messages a log can hold, damaged blocks
// included, render without a panic, and every text block is in the
// transcript whole.
func FuzzRenderTranscript(f *testing.F) {
	for _, seed := range []string{
		`[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image"}]}]`,
		`[{"role":"assistant","content":[{"type":"tool_call"},{"type":"tool_result"},{"type":"image","image":{"name":"a.png"}}]}]`,
		`[{"role":"tool","content":[{"type":"tool_result","tool_result":{"call_id":"c","name":"bash","content":[{"type":"image"},{"type":"text","text":"out"}],"is_error":true,"code":"x"}}]}]`,
		`[{"role":"assistant","content":[{"type":"tool_call","tool_call":{"id":"c","name":"write","arguments":"{\"a\":1}"}}]}]`,
		`[{"role":"","content":null},{"role":"user","content":[{"type":"reasoning","text":"r"},{"type":"weird"}]}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs []harness.Message
		if err := json.Unmarshal(data, &msgs); err != nil {
			return
		}
		out := renderTranscript(msgs)
		if !strings.HasPrefix(out, "Summarize this conversation") {
			t.Fatalf("transcript without its header: %q", out)
		}
		for _, m := range msgs {
			for _, b := range m.Content {
				if b.Type == harness.BlockText && !strings.Contains(out, b.Text) {
					t.Fatalf("text block %q missing from %q", b.Text, out)
				}
			}
		}
	})
}
