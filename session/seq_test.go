package session_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

const testHeader = `{"type":"session","format":1,"id":"%s","cwd":"/w","created":"2026-01-01T00:00:00Z"}` + "\n"

// writeRaw writes a log of the given event lines (each without its
// newline) under id and returns the store.
func writeRaw(t *testing.T, id string, lines ...string) session.TestJSONL {
	t.Helper()
	s := session.NewTestJSONL(t.TempDir(), session.StoreConfig{})
	require.NoError(t, os.MkdirAll(s.Dir(), 0o700))
	var b strings.Builder
	fmt.Fprintf(&b, testHeader, id)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(s.Path(id), []byte(b.String()), 0o600))
	return s
}

func reminderLine(seq int64, text string) string {
	return fmt.Sprintf(`{"seq":%d,"time":"2026-01-01T00:00:00Z","type":"reminder","data":{"source":"t","text":%q}}`, seq, text)
}

func warningTexts(ws []session.Warning) []string {
	out := []string{}
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

func TestSequenceNumbersAfterCorruption(t *testing.T) {
	cases := []struct {
		name     string
		seqs     []int64
		next     int64
		warnings []string
	}{
		{"in order", []int64{1, 2, 3}, 4, []string{}},
		{"gap and a step back", []int64{1, 2, 5, 3}, 6, []string{
			"line 4: sequence jumps from 2 to 5",
			"line 5: seq 3 does not increase (an earlier event has seq 5); kept, and new events are numbered after 5"}},
		{"every non-increasing number", []int64{1, 4, 2, 3, 4, 5}, 6, []string{
			"line 3: sequence jumps from 1 to 4",
			"line 4: seq 2 does not increase (an earlier event has seq 4); kept, and new events are numbered after 4",
			"line 5: seq 3 does not increase (an earlier event has seq 4); kept, and new events are numbered after 4",
			"line 6: seq 4 does not increase (an earlier event has seq 4); kept, and new events are numbered after 4"}},
		{"starts at zero", []int64{0, 1, 2}, 3, []string{"line 2: the first event has seq 0; sequence numbers start at 1"}},
		{"starts below zero", []int64{-3, -2}, 1, []string{"line 2: the first event has seq -3; sequence numbers start at 1"}},
		{"starts late", []int64{3, 4}, 5, []string{"line 2: the first event has seq 3; sequence numbers start at 1, so events before it are missing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var lines []string
			for i, seq := range c.seqs {
				lines = append(lines, reminderLine(seq, fmt.Sprint("r", i)))
			}
			s := writeRaw(t, "seq", lines...)
			log, tr, err := s.Open(context.Background(), "seq")
			require.NoError(t, err)
			require.Len(t, tr.Events, len(c.seqs), "every event is kept")
			assert.Equal(t, c.warnings, warningTexts(tr.Warnings))
			evs, err := log.Append(context.Background(), &session.Reminded{Reminder: harness.Reminder{Text: "a"}}, &session.Reminded{Reminder: harness.Reminder{Text: "b"}})
			require.NoError(t, err)
			require.NoError(t, log.Close())
			assert.Equal(t, []int64{c.next, c.next + 1}, []int64{evs[0].Seq, evs[1].Seq}, "appending continues after the highest seq")
		})
	}
}
