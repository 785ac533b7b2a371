package session

import (
	"context"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

var update = flag.Bool("update", false, "rewrite the golden session log and its derived history")

// goldenBatches is one session that uses every event type and every
// block kind this build writes, each field of the vocabulary set at least
// once, appended in the batches the agent appends them in.
func goldenBatches() [][]Payload {
	exit := 0
	old := "old line\n"
	img := harness.Image{Digest: "sha256:ab12" + strings.Repeat("0", 60), MediaType: "image/png", Width: 2, Height: 3, Size: 9, Name: "shot.png"}
	usage := &harness.Usage{InputTokens: 120, OutputTokens: 30, CacheHitTokens: 100, CacheMissTokens: 20, CacheWriteTokens: 15, ReasoningTokens: 8}
	return [][]Payload{
		{&SystemPrompt{Text: "You are terse. <b>&</b> stay \"literal\"."}},
		{&UserMessage{Content: []harness.Block{
			harness.TextBlock("fix the \"quoted\" bug <now> && test\n\tplease — ünïcode ✓ \u2028sep \x1b[31mred"),
			harness.Block{Type: harness.BlockImage, Image: new(img)},
		}}},
		{&ModelRequest{Step: 1, Model: "m1", Fingerprint: Fingerprint{System: "aa", Tools: "bb", History: "cc", Messages: 2}}},
		{&ModelRetry{Step: 1, Attempt: 1, Code: harness.CodeRateLimit, Message: "429 slow down", DelayMS: 1500}},
		{&ModelFallback{Step: 1, From: "m0", To: "m1", Code: harness.CodeServer, Message: "model: server (HTTP 529): Overloaded"}},
		{&AssistantMessage{Step: 1, Model: "m1", Content: []harness.Block{
			{Type: harness.BlockReasoning, Text: "read first, then edit", Signature: "c2lnbmVk"},
			{Type: harness.BlockReasoning, Signature: "ZW5jcnlwdGVk", Redacted: true},
			harness.TextBlock("Reading."),
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}},
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c2", Name: "bash", Arguments: `{"command":"go test ./... && echo ok"}`}},
		}, Finish: "tool_calls", Usage: usage}},
		{&PermissionDecided{Step: 1, CallID: "c1", Name: "read_file", Outcome: "allow", By: "mode", Mode: "default"}},
		{&ApprovalRequested{Step: 1, Calls: []PendingCall{{CallID: "c2", Name: "bash", Preview: "go test ./... && echo ok", Reason: "bash has side effects and no rule allows it", Suggest: "Bash(go test:*)"}},
			OutputName: "verdict", OutputSchema: json.RawMessage(`{"type":"object","required":["ok"]}`), OutputRepaired: true}},
		{&TurnEnded{Reason: ReasonAwaitingApproval, Steps: 1, Usage: *usage}},
		{&PermissionDecided{Step: 1, CallID: "c2", Name: "bash", Outcome: "allow", By: "user", Rule: "Bash(go test:*)", Reason: "asked", Feedback: "ok, once", Remember: "Bash(go test:*)"}},
		{&ToolStarted{Step: 1, CallID: "c1", Name: "read_file"}, &ToolStarted{Step: 1, CallID: "c2", Name: "bash"}},
		{&ToolRecord{CallID: "c2", Tool: "bash", Name: "env", Data: json.RawMessage(`{"TERM":"dumb"}`)}},
		{&ToolFinished{Step: 1, CallID: "c1", Name: "read_file", DurationMS: 3, Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("1\tpackage a\n"), harness.Block{Type: harness.BlockImage, Image: new(img)}},
			Render:  &harness.Render{Kind: harness.RenderLocations, Title: "Read a.go", Locations: []harness.Location{{Path: "/w/a.go", StartLine: 1, EndLine: 1}}},
			Files:   []harness.FileAccess{{Op: harness.FileRead, Path: "/w/a.go", Version: "v1", StartLine: 1, EndLine: 1, Complete: true}},
		}}},
		{&ToolFinished{Step: 1, CallID: "c2", Name: "bash", DurationMS: 1200, Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("FAIL a\nexit status 1")},
			IsError: true, Code: harness.CodeToolFailed,
			Render: &harness.Render{Kind: harness.RenderTerminal, Title: "go test ./...", Terminal: &harness.Terminal{Command: "go test ./...", Cwd: "/w", Output: "FAIL a", ExitCode: &exit, Status: "exited"}},
		}}},
		{&Reminded{Reminder: harness.Reminder{Source: "repeat_guard", Text: "you ran the same command twice"}}},
		{&ModelRequest{Step: 2, Model: "m1", Fingerprint: Fingerprint{System: "aa", Tools: "bb", History: "dd", Messages: 6}}},
		{&AssistantMessage{Step: 2, Model: "m1", Content: []harness.Block{
			{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "c3", Name: "edit_file", Arguments: `{"path":"a.go","old":"a","new":"b"}`}},
		}, Finish: "tool_calls", Usage: &harness.Usage{InputTokens: 200, OutputTokens: 10}}},
		{&ToolStarted{Step: 2, CallID: "c3", Name: "edit_file"}},
		{&ToolFinished{Step: 2, CallID: "c3", Name: "edit_file", DurationMS: 2, Result: harness.ToolResult{
			Content: []harness.Block{harness.TextBlock("edited a.go")},
			Render: &harness.Render{Kind: harness.RenderDiff, Title: "Edit a.go", Diff: &harness.Diff{Path: "/w/a.go", OldText: &old, NewText: "new line\n",
				Hunks: []harness.Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 1, Lines: []string{"-old line", "+new line"}}}, Added: 1, Removed: 1}},
			Files: []harness.FileAccess{{Op: harness.FileWrite, Path: "/w/a.go", Version: "v2"}},
		}}},
		{&Pruned{Calls: []PrunedCall{{CallID: "c1", Seq: 12, Placeholder: "[pruned: the read_file result for /w/a.go was made stale]"}}, EstimatedTokens: 9000}},
		{&AssistantMessage{Step: 3, Model: "m1", Content: []harness.Block{harness.TextBlock("Fixed.")}, Finish: "stop", Usage: &harness.Usage{InputTokens: 210, OutputTokens: 4}}},
		{&TurnEnded{Reason: ReasonCompleted, Steps: 3, Usage: harness.Usage{InputTokens: 530, OutputTokens: 44, CacheHitTokens: 100, CacheMissTokens: 20, ReasoningTokens: 8}}},
		{&Checkpoint{Kind: CheckpointTurnStart, Turn: 1, Dir: "/w", Manifest: "sha256:cd34" + strings.Repeat("0", 60),
			Scanned: time.Date(2026, 12, 1, 9, 0, 1, 5, time.UTC), Files: 3, Bytes: 120, Omitted: 1, Modified: 1, Paths: []string{"a.go"}}},
		{&UserMessage{Content: []harness.Block{harness.TextBlock("and the docs")}}},
		{&Compacted{Messages: 3, Summary: "The user asked for a fix; a.go was edited.", Model: "m1", SourceTokens: 900, SummaryTokens: 40, Usage: &harness.Usage{InputTokens: 910, OutputTokens: 38}}},
		{&Unknown{Type: "future_event", Data: json.RawMessage(`{"kept":"as it was"}`)}},
		{&TurnEnded{Reason: ReasonError, Steps: 0, Error: &ErrorInfo{Code: harness.CodeServer, Message: "the provider failed"}}},
		{&UserMessage{Content: []harness.Block{harness.TextBlock("go on")}}},
		{&UserMessage{Content: []harness.Block{harness.TextBlock("and keep it short")}, Steer: true, Step: 1}},
		{&Paused{Step: 0, Reason: ReasonAwaitingBudget, Spend: &Spend{TurnCost: 0.25, TurnTokens: 10, SessionCost: 1.5, SessionTokens: 2000, Reached: "session_cost", Limit: 1.5},
			OutputName: "verdict", OutputSchema: json.RawMessage(`{"type":"object"}`), OutputRepaired: true}},
		{&TurnEnded{Reason: ReasonAwaitingBudget}},
		{&BudgetSet{TurnCost: 1, TurnTokens: 100, SessionCost: 3, SessionTokens: 4000}},
	}
}

// TestGoldenLog writes one session that uses every event type and block
// kind through the real JSONL store and compares the file byte for byte
// with testdata/golden.jsonl, then loads it back and compares the events
// and the derived history (testdata/golden.history.json). A difference is
// a change of the log format: decide whether it needs a new format
// version, then run `go test ./session -run TestGoldenLog -update`.
func TestGoldenLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := time.Date(2026, 12, 1, 9, 0, 0, 123456789, time.UTC)
	s := newJSONL(dir, StoreConfig{})
	s.now = func() time.Time {
		clock = clock.Add(time.Second)
		return clock
	}
	log, err := s.Create(ctx, Header{ID: "golden", Cwd: "/w", Created: clock, Parent: "parent-1"})
	require.NoError(t, err)
	var written []Event
	for _, b := range goldenBatches() {
		evs, err := log.Append(ctx, b...)
		require.NoError(t, err)
		written = append(written, evs...)
	}
	require.NoError(t, log.Close())
	got, err := os.ReadFile(s.path("golden"))
	require.NoError(t, err)

	tr, err := s.Load(ctx, "golden")
	require.NoError(t, err)
	h := new(History).Add(tr.Events...)
	history, err := json.MarshalIndent(map[string]any{
		"events":      len(tr.Events),
		"messages":    h.Messages(),
		"warnings":    tr.Warnings,
		"usage":       h.Usage(),
		"turns":       h.Turns(),
		"system":      h.SystemPrompt(),
		"interrupted": h.Interrupted(),
	}, "", "  ")
	require.NoError(t, err)
	history = append(history, '\n')

	logPath := filepath.Join("testdata", "golden.jsonl")
	historyPath := filepath.Join("testdata", "golden.history.json")
	if *update {
		require.NoError(t, os.WriteFile(logPath, got, 0o644))
		require.NoError(t, os.WriteFile(historyPath, history, 0o644))
	}
	want, err := os.ReadFile(logPath)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "the log format changed; see the test's comment")
	wantHistory, err := os.ReadFile(historyPath)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantHistory), string(history), "the derived history changed")

	// Every type and kind is in it, so the golden file covers them.
	types := map[string]bool{}
	kinds := map[harness.BlockType]bool{}
	for _, e := range tr.Events {
		types[e.Type()] = true
		var blocks []harness.Block
		switch p := e.Data.(type) {
		case *UserMessage:
			blocks = p.Content
		case *AssistantMessage:
			blocks = p.Content
		case *ToolFinished:
			blocks = p.Result.Content
		}
		for _, b := range blocks {
			kinds[b.Type] = true
		}
	}
	for _, m := range h.Messages() {
		for _, b := range m.Content {
			kinds[b.Type] = true
		}
	}
	for _, typ := range []string{TypeUser, TypeAssistant, typeToolStart, TypeToolResult, typeModelRequest, TypeReminder,
		typeTurnEnd, TypeSystem, typeRecord, typeRetry, typeFallback, typePrune, typeCompaction, typeApproval, typePermission, typeCheckpoint, "future_event"} {
		assert.True(t, types[typ], "the golden log has a %s event", typ)
	}
	for _, k := range []harness.BlockType{harness.BlockText, harness.BlockReasoning, harness.BlockImage, harness.BlockToolCall, harness.BlockToolResult} {
		assert.True(t, kinds[k], "the golden log has a %s block", k)
	}

	// Loading gives back exactly what was appended.
	require.Len(t, tr.Events, len(written))
	for i := range written {
		assert.Equal(t, written[i].Seq, tr.Events[i].Seq)
		assert.True(t, written[i].Time.Equal(tr.Events[i].Time), "event %d time", written[i].Seq)
		assert.True(t, reflect.DeepEqual(written[i].Data, tr.Events[i].Data), "event %d: appended %#v, loaded %#v", written[i].Seq, written[i].Data, tr.Events[i].Data)
	}
	assert.Equal(t, Header{Format: 1, ID: "golden", Cwd: "/w", Created: time.Date(2026, 12, 1, 9, 0, 0, 123456789, time.UTC), Parent: "parent-1"}, tr.Header)
}

// TestGoldenLogCoversEveryDeclaredType reads the event type constants
// declared in event.go, so that a new event type cannot be added without
// the golden log covering it.
func TestGoldenLogCoversEveryDeclaredType(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	require.NoError(t, err)
	var declared []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(strings.ToLower(name.Name), "type") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					declared = append(declared, v)
				}
			}
		}
	}
	require.GreaterOrEqual(t, len(declared), 14, "the event type constants were found in event.go")
	golden, err := os.ReadFile(filepath.Join("testdata", "golden.jsonl"))
	require.NoError(t, err)
	for _, typ := range declared {
		assert.Contains(t, string(golden), `"type":"`+typ+`"`, "the golden log has a %s event: add one to goldenBatches and run with -update", typ)
	}
}
