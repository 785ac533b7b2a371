package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// FuzzLoad feeds arbitrary bytes after a valid header to the JSONL loader:
// it must never fail or panic, every event it returns must re-encode and
// be whole (no block without its payload), the history must derive, a
// shorter line bound must load it too, and appending must continue past
// every sequence number in it.
func FuzzLoad(f *testing.F) {
	// The golden log holds every event type and block kind: its events
	// are the first seed.
	golden, err := os.ReadFile("testdata/golden.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	_, events, _ := bytes.Cut(golden, []byte("\n"))
	f.Add(events)
	f.Add([]byte(`{"seq":1,"time":"2026-01-01T00:00:00Z","type":"user","data":{"content":[{"type":"te`))
	f.Add([]byte("\n\n{}\n[]\nnull\n"))
	f.Add([]byte(`{"seq":1,"type":"assistant","data":{"content":[{"type":"tool_call","tool_call":null}]}}` + "\n"))
	f.Add([]byte(`{"seq":2,"type":"tool_result","data":{"call_id":"x","result":{"content":null}}}` + "\n"))
	f.Add([]byte(`{"seq":1,"type":"user","data":{"content":[{"type":"image"}]}}` + "\n" + `{"seq":1,"type":"reminder","data":{}}` + "\n"))
	f.Add([]byte(`{"seq":0,"type":"assistant","data":{"content":[{"type":"image"},{"type":"tool_result"},{"type":"x"}]}}` + "\n" + `{"seq":9,"type":"reminder","data":{"text":"` + strings.Repeat("long ", 80) + `"}}` + "\n"))
	header := []byte(`{"type":"session","format":1,"id":"fz","cwd":"/w","created":"2026-01-01T00:00:00Z"}` + "\n")
	f.Fuzz(func(t *testing.T, body []byte) {
		dir := t.TempDir()
		s := session.NewTestJSONL(dir, session.StoreConfig{})
		if err := os.WriteFile(s.Path("fz"), append(append([]byte(nil), header...), body...), 0o600); err != nil {
			t.Fatal(err)
		}
		tr, err := s.Load(context.Background(), "fz")
		if err != nil {
			t.Fatalf("a valid header must always load: %v", err)
		}
		var highest int64
		for _, e := range tr.Events {
			if _, err := json.Marshal(e); err != nil {
				t.Fatalf("event %d does not re-encode: %v", e.Seq, err)
			}
			highest = max(highest, e.Seq)
			checkPayload(t, e)
		}
		h := new(session.History).Add(tr.Events...)
		for _, m := range h.Messages() {
			if m.Role == harness.RoleTool && (len(m.Content) != 1 || m.Content[0].ToolResult == nil) {
				t.Fatalf("tool message without exactly one result: %+v", m)
			}
		}
		checkWhole(t, h.Messages())

		// A store reading shorter lines loads the same log too, keeping
		// no more.
		small, err := session.NewTestJSONL(dir, session.StoreConfig{MaxLineSize: 128}).Load(context.Background(), "fz")
		if err != nil {
			t.Fatalf("a valid header must always load, whatever the line bound: %v", err)
		}
		if len(small.Events) > len(tr.Events) {
			t.Fatalf("a shorter line bound kept more events: %d > %d", len(small.Events), len(tr.Events))
		}

		// Appending after the log continues past every number in it.
		log, _, err := s.Open(context.Background(), "fz")
		if err != nil {
			t.Fatalf("a loadable log must open: %v", err)
		}
		evs, err := log.Append(context.Background(), &session.Reminded{Reminder: harness.Reminder{Text: "next"}})
		if err != nil {
			t.Fatal(err)
		}
		if evs[0].Seq <= highest || evs[0].Seq < 1 {
			t.Fatalf("appended seq %d after a log whose highest seq is %d", evs[0].Seq, highest)
		}
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := s.Load(context.Background(), "fz")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(again.Events); n != len(tr.Events)+1 || again.Events[n-1].Seq != evs[0].Seq {
			t.Fatalf("after appending, %d events load (had %d)", n, len(tr.Events))
		}
	})
}

// checkPayload fails when a loaded event holds a block or content item
// without the payload its type promises, or a tool event naming no call.
func checkPayload(t *testing.T, e session.Event) {
	t.Helper()
	contents := func(cs []harness.Block) {
		for _, c := range cs {
			if c.Type == harness.BlockImage && c.Image == nil {
				t.Fatalf("event %d: image content without its image", e.Seq)
			}
		}
	}
	switch p := e.Data.(type) {
	case *session.UserMessage:
		contents(p.Content)
	case *session.AssistantMessage:
		checkWhole(t, []harness.Message{{Role: harness.RoleAssistant, Content: p.Content}})
	case *session.ToolFinished:
		if p.CallID == "" {
			t.Fatalf("event %d: a result naming no call", e.Seq)
		}
		contents(p.Result.Content)
	case *session.ToolStarted:
		if p.CallID == "" {
			t.Fatalf("event %d: a start naming no call", e.Seq)
		}
	}
}
