package search

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// fuzzEvent builds an event of one of the fast-path types holding the
// texts a and b.
func fuzzEvent(kind uint8, a, b string) session.Payload {
	switch kind % 6 {
	case 0:
		return &session.UserMessage{Content: []harness.Block{harness.TextBlock(a), harness.Block{Type: harness.BlockImage, Image: &harness.Image{Digest: "sha256:00", Name: b}}, harness.TextBlock(b)}}
	case 1:
		args, _ := json.Marshal(map[string]any{"z": a, "a": []string{b, a}})
		return &session.AssistantMessage{Step: 1, Content: []harness.Block{
			{Type: harness.BlockReasoning, Text: b},
			harness.TextBlock(a),
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c", Name: "write", Arguments: string(args)}},
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "d", Name: "bash", Arguments: a}},
		}}
	case 2:
		return &session.ToolFinished{CallID: "c", Name: "bash", Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock(a), harness.TextBlock(b)},
			Render:  &harness.Render{Kind: harness.RenderGeneric, Text: a + b, Title: b}}}
	case 3:
		return &session.Reminded{Reminder: harness.Reminder{Source: a, Text: b}}
	case 4:
		return &session.SystemPrompt{Text: a + b}
	default:
		return &session.ToolFinished{CallID: a, Name: b, Result: harness.ToolResult{IsError: true, Content: []harness.Block{harness.TextBlock(b)}}}
	}
}

// asciiOnly rewrites a JSON text as an ASCII-only writer would: every
// non-ASCII character as \uXXXX (surrogate pairs above U+FFFF) and '/'
// as "\/". Both occur only inside strings.
func asciiOnly(line []byte) []byte {
	var b []byte
	for _, r := range string(line) {
		switch {
		case r == '/':
			b = append(b, `\/`...)
		case r < 0x80:
			b = append(b, byte(r))
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			b = fmt.Appendf(b, `\u%04x\u%04x`, r1, r2)
		default:
			b = fmt.Appendf(b, `\u%04x`, r)
		}
	}
	return b
}

// FuzzFastMatch: the fast path reports exactly what decoding the whole
// line with encoding/json and matching the event reports, for lines as
// this build writes them and as an HTML-escaping writer writes them.
func FuzzFastMatch(f *testing.F) {
	f.Add("fix the \"quoted\" bug\n\tnow", "C:\\path ü ✓", uint8(0), 3, 5, uint8(10), false)
	f.Add("<html> & \u2028 \x01", "tail", uint8(1), 0, 4, uint8(1), false)
	f.Add("abc\\ndef", "x", uint8(2), 3, 6, uint8(2), true)
	f.Add("a\\\\\"b", "\\\"", uint8(3), 1, 4, uint8(0), false)
	f.Add("日本語のテキスト", "\xff\xfe bad", uint8(4), 3, 9, uint8(7), true)
	f.Add("needle", "needle", uint8(5), 0, 6, uint8(80), false)
	f.Fuzz(func(t *testing.T, a, b string, kind uint8, from, to int, ctxBytes uint8, regex bool) {
		text := a + b
		if from < 0 {
			from = -from
		}
		if to < 0 {
			to = -to
		}
		from, to = from%(len(text)+1), to%(len(text)+1)
		if from > to {
			from, to = to, from
		}
		q := text[from:to]
		if q == "" {
			return
		}
		if regex {
			q = regexp.QuoteMeta(q)
		}
		s, err := compile(Options{Query: q, Regex: regex, Workspace: "/w", Context: int(ctxBytes),
			Types: []string{session.TypeUser, session.TypeAssistant, session.TypeToolResult, session.TypeReminder, session.TypeSystem}})
		if err != nil {
			return // an invalid regex (from invalid UTF-8), or one matching empty text
		}
		e := session.Event{Seq: 42, Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Data: fuzzEvent(kind, a, b)}
		ours, err := e.MarshalJSON()
		require.NoError(t, err)
		data, err := json.Marshal(e.Data) // HTML-escaped
		require.NoError(t, err)
		foreign := []byte(`{"seq":42,"time":"2026-01-02T03:04:05.000000006Z","type":` + strconv.Quote(e.Type()) + `,"data":` + string(data) + `}`)
		for _, line := range [][]byte{ours, foreign, asciiOnly(ours)} {
			var dec session.Event
			require.NoError(t, json.Unmarshal(line, &dec))
			want, wantFound := s.matchEvent(dec)
			got, gotFound, handled := s.fastMatch(line)
			require.True(t, handled, "the fast path handles %s", line)
			require.Equal(t, wantFound, gotFound, "line %s query %q", line, q)
			require.Equal(t, want, got, "line %s query %q", line, q)
		}
	})
}
