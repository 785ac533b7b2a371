package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-harness/harness"
)

// FuzzDescribe: any message a recording can hold, blocks without their
// payload included, is described on one line without a panic.
func FuzzDescribe(f *testing.F) {
	for _, seed := range []string{
		`{"role":"assistant","content":[{"type":"tool_call"},{"type":"tool_result"},{"type":"image"}]}`,
		`{"role":"assistant","content":[{"type":"tool_call","tool_call":{"id":"c","name":"n","arguments":"{}"}},{"type":"text","text":"t"}]}`,
		`{"role":"tool","content":[{"type":"tool_result","tool_result":{"call_id":"c","name":"n","content":[{"type":"text","text":"x"}]}}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m harness.Message
		if err := json.Unmarshal(data, &m); err != nil {
			return
		}
		out := describe(m)
		for _, b := range m.Content {
			missing := b.Type == harness.BlockToolCall && b.ToolCall == nil ||
				b.Type == harness.BlockToolResult && b.ToolResult == nil ||
				b.Type == harness.BlockImage && b.Image == nil
			if missing && !strings.Contains(out, string(b.Type)+" (missing)") {
				t.Fatalf("a %s block without its payload is not named in %q", b.Type, out)
			}
		}
	})
}
