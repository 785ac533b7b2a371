package session

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

// genericLine is an event's line as encoding/json alone writes it: the
// envelope, then the payload encoded by reflection, HTML characters not
// escaped. The event encoder must write the same bytes, whichever way it
// takes.
func genericLine(t testing.TB, e Event) string {
	t.Helper()
	data, err := marshalNoEscape(e.Data)
	require.NoError(t, err)
	typ, err := marshalNoEscape(e.Data.eventType())
	require.NoError(t, err)
	return `{"seq":` + strconvI(e.Seq) + `,"time":"` + e.Time.Format(time.RFC3339Nano) + `","type":` + string(typ) + `,"data":` + string(data) + `}`
}

func strconvI(n int64) string { b, _ := json.Marshal(n); return string(b) }

// The records a step logs are written by hand, the others with a reused
// json.Encoder; every line is what encoding/json writes, byte for byte,
// so the format on disk does not change (golden.jsonl checks it too).
func TestEventEncoderMatchesEncodingJSON(t *testing.T) {
	odd := "a\"b\\c\n\t\x00\x1f\b\f <&> é \u2028 \xff end"
	payloads := []Payload{
		&ToolStarted{Step: 3, CallID: "call_1", Name: "read_file"},
		&ToolStarted{Step: -1, CallID: odd, Name: odd},
		&ToolStarted{},
		&ModelRequest{Step: 2, Model: "deepseek-chat", Fingerprint: Fingerprint{System: strings.Repeat("ab", 32), Tools: "cd", History: "ef", Messages: 41}},
		&ModelRequest{Model: odd, Fingerprint: Fingerprint{System: odd, Tools: odd, History: odd, Messages: -7}},
		&ModelRequest{},
		&AssistantMessage{Step: 1, Model: "m", Content: []harness.Block{harness.TextBlock(odd),
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c1", Name: "noop", Arguments: `{"path":"a.go"}`}}}, Finish: "tool_calls"},
		&ToolFinished{Step: 1, CallID: "c1", Name: "noop", Result: harness.ToolResult{Content: []harness.Block{harness.TextBlock("ok <b>")}}, DurationMS: 4},
		&TurnEnded{Reason: ReasonCompleted, Steps: 2, Usage: harness.Usage{InputTokens: 5}},
		&UserMessage{Content: []harness.Block{harness.TextBlock("go")}},
	}
	var enc eventEncoder // one encoder for all, as a log uses it
	now := time.Date(2026, 12, 6, 0, 1, 2, 300, time.UTC)
	var all []byte
	for i, p := range payloads {
		e := Event{Seq: int64(i + 1), Time: now, Data: p}
		line, err := enc.append(nil, e)
		require.NoError(t, err)
		assert.Equal(t, genericLine(t, e), string(line), "%T", p)
		single, err := e.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, string(line), string(single), "MarshalJSON writes the same line")
		var back Event
		require.NoError(t, json.Unmarshal(line, &back))
		assert.Equal(t, e.Seq, back.Seq)
		all, err = enc.append(all, e)
		require.NoError(t, err)
		all = append(all, '\n')
	}
	// Appended after one another into one buffer, as a log's pending lines.
	lines := strings.Split(strings.TrimSuffix(string(all), "\n"), "\n")
	require.Len(t, lines, len(payloads))
	for i, p := range payloads {
		assert.Equal(t, genericLine(t, Event{Seq: int64(i + 1), Time: now, Data: p}), lines[i])
	}
}

// FuzzEventEncoder checks the hand-written encodings of the records a step
// logs against encoding/json, for any strings and numbers, and that the
// line decodes back to the record.
func FuzzEventEncoder(f *testing.F) {
	f.Add(1, "call_1", "read_file", "m", "aa", "bb", "cc", 2)
	f.Add(-3, "a\"b\\c", "\x00\u2028<&>", "é\xff", "\b\f", "", "\t\n", -1)
	f.Fuzz(func(t *testing.T, step int, callID, name, model, sys, tools, hist string, msgs int) {
		now := time.Date(2026, 12, 6, 0, 1, 2, 300, time.UTC)
		for _, p := range []Payload{
			&ToolStarted{Step: step, CallID: callID, Name: name},
			&ModelRequest{Step: step, Model: model, Fingerprint: Fingerprint{System: sys, Tools: tools, History: hist, Messages: msgs}},
		} {
			e := Event{Seq: 7, Time: now, Data: p}
			line, err := e.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, genericLine(t, e), string(line))
			// It decodes as encoding/json decodes what it encodes.
			var back Event
			require.NoError(t, back.UnmarshalJSON(line))
			data, err := marshalNoEscape(p)
			require.NoError(t, err)
			want, _ := newPayload(p.eventType())
			require.NoError(t, json.Unmarshal(data, want))
			require.Equal(t, want, back.Data)
		}
	})
}
