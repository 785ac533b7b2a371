package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/sessiontest"
)

// FuzzLoad feeds arbitrary bytes after a valid header to the JSONL loader:
// it must never fail or panic, every event it returns must re-encode, and
// the history must derive.
func FuzzLoad(f *testing.F) {
	var sample bytes.Buffer
	for i, p := range sessiontest.SamplePayloads() {
		line, _ := session.Event{Seq: int64(i + 1), Data: p}.MarshalJSON()
		sample.Write(line)
		sample.WriteByte('\n')
	}
	f.Add(sample.Bytes())
	f.Add([]byte(`{"seq":1,"time":"2026-01-01T00:00:00Z","type":"user","data":{"content":[{"type":"te`))
	f.Add([]byte("\n\n{}\n[]\nnull\n"))
	f.Add([]byte(`{"seq":1,"type":"assistant","data":{"content":[{"type":"tool_call","tool_call":null}]}}` + "\n"))
	f.Add([]byte(`{"seq":2,"type":"tool_result","data":{"call_id":"x","result":{"content":null}}}` + "\n"))
	header := []byte(`{"type":"session","format":1,"id":"fz","cwd":"/w","created":"2026-01-01T00:00:00Z"}` + "\n")
	f.Fuzz(func(t *testing.T, body []byte) {
		dir := t.TempDir()
		s := session.NewJSONL(dir)
		if err := os.WriteFile(s.Path("fz"), append(append([]byte(nil), header...), body...), 0o600); err != nil {
			t.Fatal(err)
		}
		tr, err := s.Load(context.Background(), "fz")
		if err != nil {
			t.Fatalf("a valid header must always load: %v", err)
		}
		for _, e := range tr.Events {
			if _, err := json.Marshal(e); err != nil {
				t.Fatalf("event %d does not re-encode: %v", e.Seq, err)
			}
		}
		h := session.BuildHistory(tr.Events)
		for _, m := range h.Messages() {
			if m.Role == session.RoleTool && (len(m.Content) != 1 || m.Content[0].ToolResult == nil) {
				t.Fatalf("tool message without exactly one result: %+v", m)
			}
		}
	})
}
