package session_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

func user(s string) *session.UserMessage {
	return &session.UserMessage{Content: []harness.Block{harness.TextBlock(s)}}
}

// writeLog creates a JSONL session with n user events and returns the
// store and the file's path.
func writeLog(t *testing.T, n int) (session.TestJSONL, string, string) {
	t.Helper()
	s := session.NewTestJSONL(t.TempDir(), session.StoreConfig{})
	log, err := s.Create(context.Background(), session.Header{Cwd: "/w"})
	require.NoError(t, err)
	for i := range n {
		_, err := log.Append(context.Background(), user(strings.Repeat("x", i+1)))
		require.NoError(t, err)
	}
	require.NoError(t, log.Close())
	id := log.Header().ID
	return s, id, s.Path(id)
}

func appendRaw(t *testing.T, path, raw string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(raw)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestTornLastLine(t *testing.T) {
	s, id, path := writeLog(t, 3)
	appendRaw(t, path, `{"seq":4,"time":"2026-11-29T00:00:00Z","type":"user","data":{"content":[{"type":"te`)

	tr, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, tr.Events, 3, "complete events survive")
	require.Len(t, tr.Warnings, 1)
	assert.Contains(t, tr.Warnings[0].Message, "torn last line")
	assert.Equal(t, 5, tr.Warnings[0].Line)

	// Resuming appends after the torn bytes without gluing onto them.
	log, tr2, err := s.Open(context.Background(), id)
	require.NoError(t, err)
	assert.Len(t, tr2.Events, 3)
	evs, err := log.Append(context.Background(), user("after the crash"))
	require.NoError(t, err)
	assert.Equal(t, int64(4), evs[0].Seq)
	require.NoError(t, log.Close())

	tr3, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, tr3.Events, 4)
	assert.Equal(t, "after the crash", tr3.Events[3].Data.(*session.UserMessage).Content[0].Text)
	require.Len(t, tr3.Warnings, 1, "the torn line is now a skipped line in the middle")
	assert.Contains(t, tr3.Warnings[0].Message, "torn line skipped")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"type":"te`+"\n", "nothing is deleted from the log")
}

func TestCompleteLastLineWithoutNewline(t *testing.T) {
	s, id, path := writeLog(t, 1)
	appendRaw(t, path, `{"seq":2,"time":"2026-11-29T00:00:00Z","type":"user","data":{"content":[{"type":"text","text":"no newline"}]}}`)
	log, tr, err := s.Open(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, tr.Events, 2, "a complete event missing only its newline is kept")
	assert.Empty(t, tr.Warnings)
	evs, err := log.Append(context.Background(), user("next"))
	require.NoError(t, err)
	assert.Equal(t, int64(3), evs[0].Seq)
	require.NoError(t, log.Close())
	tr2, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	assert.Len(t, tr2.Events, 3)
	assert.Empty(t, tr2.Warnings)
}

func TestUnknownEventTypeLine(t *testing.T) {
	s, id, path := writeLog(t, 1)
	appendRaw(t, path, `{"seq":2,"time":"2026-11-29T00:00:00Z","type":"goal_set","data":{"goal":"ship"}}`+"\n")
	appendRaw(t, path, `{"seq":3,"time":"2026-11-29T00:00:00Z","type":"user","data":{"content":[{"type":"text","text":"still here"}]}}`+"\n")
	tr, err := s.Load(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, tr.Events, 3)
	require.Len(t, tr.Warnings, 1)
	assert.Contains(t, tr.Warnings[0].Message, `"goal_set"`)
	msgs := new(session.History).Add(tr.Events...).Messages()
	require.Len(t, msgs, 2)
	assert.Equal(t, "still here", msgs[1].Text())
}

func TestNewerFormatRefused(t *testing.T) {
	dir := t.TempDir()
	s := session.NewTestJSONL(dir, session.StoreConfig{})
	require.NoError(t, os.WriteFile(s.Path("future"), []byte(`{"type":"session","format":7,"id":"future","cwd":"/w","created":"2030-01-01T00:00:00Z"}`+"\n"), 0o600))
	_, err := s.Load(context.Background(), "future")
	require.ErrorIs(t, err, harness.CodeUnsupportedFormat)
	assert.Contains(t, err.Error(), "log format 7")
	assert.Contains(t, err.Error(), "newer harness")
	assert.Contains(t, err.Error(), "upgrade")
	_, _, err = s.Open(context.Background(), "future")
	assert.ErrorIs(t, err, harness.CodeUnsupportedFormat, "never appended to")
}

func TestBadHeadersAndGaps(t *testing.T) {
	dir := t.TempDir()
	s := session.NewTestJSONL(dir, session.StoreConfig{})
	require.NoError(t, os.WriteFile(s.Path("empty"), nil, 0o600))
	_, err := s.Load(context.Background(), "empty")
	assert.ErrorContains(t, err, "empty")
	require.NoError(t, os.WriteFile(s.Path("notalog"), []byte("hello\n"), 0o600))
	_, err = s.Load(context.Background(), "notalog")
	assert.ErrorContains(t, err, "not a session header")

	st, id, path := writeLog(t, 0)
	appendRaw(t, path, `{"seq":1,"time":"2026-11-29T00:00:00Z","type":"user","data":{"content":[]}}`+"\n\n")
	appendRaw(t, path, `{"seq":5,"time":"2026-11-29T00:00:00Z","type":"user","data":{"content":[]}}`+"\n")
	tr, err := st.Load(context.Background(), id)
	require.NoError(t, err)
	assert.Len(t, tr.Events, 2, "blank lines are ignored")
	require.Len(t, tr.Warnings, 1)
	assert.Contains(t, tr.Warnings[0].Message, "jumps from 1 to 5")
}

func TestLogLinesAreSearchableText(t *testing.T) {
	st, id, p := writeLog(t, 0)
	log, _, err := st.Open(context.Background(), id)
	require.NoError(t, err)
	_, err = log.Append(context.Background(), user("if a < b && c > d { ünïcode }"))
	require.NoError(t, err)
	require.NoError(t, log.Close())
	raw, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Contains(t, string(raw), "if a < b && c > d { ünïcode }", "no HTML escaping, raw UTF-8")
}

// A write cut right after a backslash (or inside \u) leaves a line that
// encoding/json reports as an invalid character, not as unexpected end:
// it is still a torn line.
func TestTornInsideEscape(t *testing.T) {
	for _, tail := range []string{`\`, `\u00`, `\u`} {
		s, id, path := writeLog(t, 1)
		appendRaw(t, path, `{"seq":2,"time":"2026-11-29T00:00:00Z","type":"user","data":{"content":[{"type":"text","text":"a`+tail)
		log, _, err := s.Open(context.Background(), id)
		require.NoError(t, err)
		_, err = log.Append(context.Background(), user("after"))
		require.NoError(t, err)
		require.NoError(t, log.Close())
		tr, err := s.Load(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, tr.Warnings, 1)
		assert.Contains(t, tr.Warnings[0].Message, "torn line skipped", "cut after %q", tail)
	}
}
