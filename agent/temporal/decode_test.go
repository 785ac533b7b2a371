package temporal

import (
	"encoding/json"
	"testing"

	"github.com/go-harness/harness/agent"
)

// FuzzDecodeEvent: any line decodes to its type or an error, never a
// panic, and a line MarshalEvent wrote keeps its type and its bytes.
func FuzzDecodeEvent(f *testing.F) {
	for _, ev := range []agent.Event{&agent.TextDelta{Text: "hi"}, &agent.TurnEnd{Reason: "completed", Steps: 2}} {
		b, err := agent.MarshalEvent(ev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"type":1}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, line string) {
		ev, err := decodeEvent(line)
		if err != nil {
			return
		}
		if string(ev.JSON) != line {
			t.Fatalf("the line changed: %q -> %q", line, ev.JSON)
		}
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal([]byte(line), &head) != nil || head.Type != ev.Type {
			t.Fatalf("type %q, decoded %q", head.Type, ev.Type)
		}
	})
}
