package session_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/session"
)

// TestFormat1LogFromBeforeTheRedesign loads a log written by the harness
// before its core was redesigned (testdata/format1-main.jsonl, every event
// type and block kind of format 1, plus an event type from the future) and
// compares what it derives with what that build derived from it
// (testdata/format1-main.history.json). A change here means logs on users'
// disks would resume differently.
func TestFormat1LogFromBeforeTheRedesign(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("testdata", "format1-main.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "format1-main.jsonl"), raw, 0o600))
	want, err := os.ReadFile(filepath.Join("testdata", "format1-main.history.json"))
	require.NoError(t, err)

	tr, err := session.NewJSONL(dir, session.StoreConfig{}).Load(context.Background(), "format1-main")
	require.NoError(t, err)
	assert.Equal(t, 1, tr.Header.Format)
	assert.Equal(t, "parent-1", tr.Header.Parent)
	h := new(session.History).Add(tr.Events...)
	got, err := json.Marshal(map[string]any{
		"events":     len(tr.Events),
		"messages":   h.Messages(),
		"warnings":   tr.Warnings,
		"usage":      h.Usage(),
		"turns":      h.Turns(),
		"system":     h.SystemPrompt(),
		"superseded": h.Superseded(),
	})
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}
