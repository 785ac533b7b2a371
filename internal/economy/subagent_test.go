package economy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/codesearch"
	"github.com/go-harness/harness/tools/files"
)

// exploreAnswer is the exploration's report: what the parent needs.
const exploreAnswer = "The markers are at line 1, 31, 61, ... 271 of each of pkg00.go to pkg09.go (ten per file, all todo); nothing else refers to them. helper functions follow one pattern and need no change."

// exploration is 39 steps of searching and reading across ten files,
// then the report: a 40-step exploration.
func exploration() []replay.Response {
	var out []replay.Response
	for i := range 39 {
		f := fmt.Sprintf("pkg%02d.go", i%10)
		var c = replay.ToolCall(fmt.Sprintf("x%02d", i), "read", map[string]any{"file_path": f})
		switch i % 3 {
		case 1:
			c = replay.ToolCall(fmt.Sprintf("x%02d", i), "grep", map[string]any{"pattern": fmt.Sprintf("marker %d", i%10), "output_mode": "content"})
		case 2:
			c = replay.ToolCall(fmt.Sprintf("x%02d", i), "read", map[string]any{"file_path": f, "offset": 30 * (i % 10), "limit": 60})
		}
		out = append(out, replay.Call(c))
	}
	return append(out, replay.Response{Text: exploreAnswer})
}

// runExploration runs the exploration in the parent itself, or handed to
// an explore sub-agent, and returns the parent's and the child's models.
func runExploration(t *testing.T, sub bool) (parent, child *countingModel, childLog int) {
	ctx := context.Background()
	workspace := t.TempDir()
	for i := range 10 {
		name := fmt.Sprintf("pkg%02d.go", i)
		require.NoError(t, os.WriteFile(filepath.Join(workspace, name), []byte(sourceFile(name)), 0o644))
	}
	fsys, err := fslocal.New(workspace)
	require.NoError(t, err)
	defer fsys.Close()
	prompt := "Find every marker in the package and report where they are."
	info := model.Info{Name: "scripted-128k", ContextWindow: 128_000}
	child = &countingModel{script: replay.NewScripted(exploration()...), info: info}
	if sub {
		parent = &countingModel{script: replay.NewScripted(
			replay.Call(replay.ToolCall("t1", "task", map[string]any{"agent": "explore", "description": "find the markers", "prompt": prompt})),
			replay.Response{Text: "Done: " + exploreAnswer},
		), info: info}
	} else {
		parent = &countingModel{script: replay.NewScripted(append(exploration()[:39], replay.Response{Text: "Done: " + exploreAnswer})...), info: info}
	}
	store := session.NewMemory(session.StoreConfig{})
	opts := []agent.Option{
		agent.WithModel(parent), agent.WithStores(agent.Stores{Files: fsys, Sessions: store}),
		agent.WithTools(append(files.Tools(files.Config{}), codesearch.Tools(codesearch.Config{})...)...),
		agent.WithSystemPrompt("You are a careful coding agent."),
		agent.WithContextPolicy(agent.ContextPolicy{Disabled: true}), // the sub-agent's effect alone
	}
	if sub {
		opts = append(opts, agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{
			Name: "explore", Description: "Read-only research.", System: "You explore and report briefly.",
			Tools: []string{"read", "glob", "grep"}, Model: child,
		}}}))
	}
	loop, err := agent.New(opts...)
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{})
	require.NoError(t, err)
	var end *agent.TurnEnd
	var childID string
	for ev, err := range s.Run(ctx, prompt) {
		require.NoError(t, err)
		switch e := ev.(type) {
		case *agent.TurnEnd:
			end = e
		case *agent.SubAgentEvent:
			childID = e.Session
		}
	}
	require.Equal(t, session.ReasonCompleted, end.Reason)
	if sub {
		require.Equal(t, 2, end.Steps)
		tr, err := store.Load(ctx, childID)
		require.NoError(t, err)
		finished := 0
		for _, e := range tr.Events {
			if _, ok := e.Data.(*session.ToolFinished); ok {
				finished++
			}
		}
		childLog = finished
	} else {
		require.Equal(t, 40, end.Steps)
	}
	return parent, child, childLog
}

// TestSubAgentEconomyFigure runs a scripted 40-step exploration in the
// parent and handed to an explore sub-agent, and compares the tokens the
// parent's context costs: every request's and the last (largest) one.
func TestSubAgentEconomyFigure(t *testing.T) {
	tok := func(b int64) int64 { return int64(float64(b) / bytesPerToken) }
	alone, _, _ := runExploration(t, false)
	parent, child, childCalls := runExploration(t, true)
	t.Logf("exploration in the parent: %d requests, %d bytes sent (~%d tokens), largest context %d bytes (~%d tokens)",
		alone.requests, alone.bytes, tok(alone.bytes), alone.peak, tok(alone.peak))
	t.Logf("with the explore sub-agent: the parent %d requests, %d bytes (~%d tokens), largest context %d bytes (~%d tokens); the child %d requests, %d bytes (~%d tokens), its log keeps all %d calls",
		parent.requests, parent.bytes, tok(parent.bytes), parent.peak, tok(parent.peak), child.requests, child.bytes, tok(child.bytes), childCalls)
	saving := 1 - float64(parent.bytes)/float64(alone.bytes)
	peakSaving := 1 - float64(parent.peak)/float64(alone.peak)
	t.Logf("the parent sends %.1f%% fewer tokens, and its largest context is %.1f%% smaller", 100*saving, 100*peakSaving)
	assert.Equal(t, 39, childCalls, "the child's log keeps every call of the exploration")
	assert.GreaterOrEqual(t, saving, 0.5, "target: at least 50% fewer tokens in the parent")
	assert.GreaterOrEqual(t, peakSaving, 0.5)
}
