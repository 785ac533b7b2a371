package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// Issue 33: /undo takes back the last turn's changes, bash's included;
// /rewind lists the turns and asks which (Enter cancels), and /rewind N,
// confirmed, goes back to before one; the
// conversation goes on in a fork without the turns taken back.
func TestUndoAndRewind(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t,
		call(writeCall("w1", "one.txt", "one\n")), say("wrote one"),
		call(toolCall(0, "b1", "bash", map[string]any{"command": "echo changed > a.txt; rm b.txt"})), say("changed a, removed b"),
		say("after the rewind"))
	ws := workspace(t, map[string]string{"a.txt": "original\n", "b.txt": "keep me\n"})
	stdin := strings.Join([]string{"first turn", "second turn", "/undo", "/rewind", "", "/rewind 1", "y", "what now?"}, "\n") + "\n"
	r := runCLI(t, p.env(), stdin, "-C", ws, "-sessions", t.TempDir(), "-sandbox", "full-access")
	require.Equal(t, exitOK, r.code, r.stderr)
	out := r.stdout

	assert.Contains(t, out, "the rewind to before turn 2:\n  restore   a.txt  +1 -1\n  recreate  b.txt  +0 -1\n")
	assert.Contains(t, out, "rewound to before turn 2: 2 paths taken back · the conversation goes on in session ")
	assert.Contains(t, out, "turns of this session (rewinding to one goes back to just before it):\n  1  ")
	assert.Contains(t, out, "first turn  (1 created)\n")
	assert.Contains(t, out, "the rewind to before turn 1:\n  delete    one.txt  +1 -0\n")
	assert.Contains(t, out, "rewound to before turn 1: 1 path taken back")

	b, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "original\n", string(b), "/undo brought back what bash changed")
	b, err = os.ReadFile(filepath.Join(ws, "b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "keep me\n", string(b), "/undo brought back what bash removed")
	assert.NoFileExists(t, filepath.Join(ws, "one.txt"), "/rewind 1 took back the first turn's write")

	reqs := p.Requests()
	require.Len(t, reqs, 5)
	last := reqs[4].Text(t)
	assert.Contains(t, last, "what now?")
	assert.NotContains(t, last, "first turn", "the conversation went back to before turn 1")
	assert.NotContains(t, last, "second turn")
}
