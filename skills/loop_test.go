package skills_test

import (
	"context"
	iofs "io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	memfs "github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/skills"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/permission"
)

func run(t *testing.T, s *agent.Session, prompt string) ([]agent.Event, *agent.TurnEnd) {
	t.Helper()
	var evs []agent.Event
	var end *agent.TurnEnd
	for ev := range s.Run(context.Background(), prompt) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.NotNil(t, end)
	return evs, end
}

// everything returns all the text of a request: its system prompt and
// every message.
func everything(system string, msgs []harness.Message) string {
	var b strings.Builder
	b.WriteString(system)
	for _, m := range msgs {
		b.WriteString("\n")
		b.WriteString(m.Text())
		for _, bl := range m.Content {
			if bl.ToolResult != nil {
				b.WriteString(bl.ToolResult.Text())
			}
		}
	}
	return b.String()
}

func TestProgressiveDisclosure(t *testing.T) {
	c, err := skills.New(skills.Config{Embedded: []iofs.FS{os.DirFS("testdata/anthropics-skills")}})
	require.NoError(t, err)
	body, err := os.ReadFile("testdata/anthropics-skills/mcp-builder/SKILL.md")
	require.NoError(t, err)
	const bodyLine = "Create MCP (Model Context Protocol) servers that enable LLMs to interact with external services"
	require.Contains(t, string(body), bodyLine)
	const refLine = "# MCP Server Best Practices"

	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "skill", map[string]any{"name": "mcp-builder"})}},
		// 5.0, not 5: the read tool's adapter then rewrites the arguments
		// from their decoded value, which must be the rewritten path's.
		replay.Response{ToolCalls: []harness.ToolCall{{ID: "c2", Name: "read", Arguments: `{"file_path":"skill://mcp-builder/reference/mcp_best_practices.md","limit":5.0}`}}},
		replay.Response{Text: "I know how to build it."},
	)
	ws := memfs.NewMemFS("/ws")
	loop, err := agent.New(agent.WithModel(m), agent.WithSystemPrompt("sys"),
		agent.WithTools(append(files.Tools(files.Config{}), c.Tool())...),
		agent.WithStores(agent.Stores{Files: ws}),
		agent.WithContext(c),
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{c.Middleware()}}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	_, end := run(t, s, "build an MCP server")
	require.NoError(t, end.Err)

	reqs := m.Requests()
	require.Len(t, reqs, 3)
	first := everything(reqs[0].System, reqs[0].Messages)
	assert.Contains(t, reqs[0].System, "sys\n\nSkills are available")
	assert.Contains(t, reqs[0].System, "\n- mcp-builder: Guide for creating high-quality MCP (Model Context Protocol) servers")
	assert.Contains(t, reqs[0].System, "\n- webapp-testing: ")
	assert.NotContains(t, first, bodyLine, "before the skill tool is called the model sees names and descriptions only")
	assert.NotContains(t, first, refLine)

	second := everything(reqs[1].System, reqs[1].Messages)
	assert.Contains(t, second, bodyLine, "the skill tool loads the body")
	assert.Contains(t, second, "Loaded the skill mcp-builder (from embedded skills #1:mcp-builder).\nIts files are in skill://mcp-builder")
	assert.NotContains(t, second, refLine, "referenced files wait for read")
	assert.NotContains(t, second, "# Web Application Testing", "other skills' bodies are never sent")

	third := everything(reqs[2].System, reqs[2].Messages)
	assert.Contains(t, third, "File: skill://mcp-builder/reference/mcp_best_practices.md\n1: "+refLine, "read reaches an embedded skill's file through skill://")
	assert.Equal(t, reqs[0].System, reqs[2].System, "the prefix does not change as skills load")
}

// bashTool stands for the shell: it records the commands it runs.
type bashTool struct {
	mu  sync.Mutex
	ran []string
}

func (b *bashTool) tool() tools.Tool {
	type in struct {
		Command string `json:"command"`
	}
	return tools.Define(tools.Spec{Name: "bash", Description: "Run a command.", SideEffects: true},
		func(ctx context.Context, call *tools.Call, a in) (*harness.ToolResult, error) {
			b.mu.Lock()
			b.ran = append(b.ran, a.Command)
			b.mu.Unlock()
			return harness.TextResult("ran " + a.Command), nil
		})
}

func (b *bashTool) commands() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ran...)
}

func echoTool() tools.Tool {
	type in struct {
		Text string `json:"text"`
	}
	return tools.Define(tools.Spec{Name: "echo", Description: "Echo."},
		func(ctx context.Context, call *tools.Call, a in) (*harness.ToolResult, error) {
			return harness.TextResult(a.Text), nil
		})
}

func resultOf(evs []agent.Event, id string) *harness.ToolResult {
	for _, ev := range evs {
		if e, ok := ev.(*agent.ToolCallEnd); ok && e.Call.ID == id {
			return e.Result
		}
	}
	return nil
}

// wait-for-agent (imbue-ai/mng) allows only Bash(uv run mngr list *)
// and Bash(while true; do*).
func TestAllowedToolsNarrowTheTurn(t *testing.T) {
	c, err := skills.New(skills.Config{Embedded: []iofs.FS{os.DirFS("testdata/imbue-ai-mng")}})
	require.NoError(t, err)
	bash := &bashTool{}
	pol, err := permission.New(permission.Rules{Mode: permission.ModeBypass, Home: "/home/u"})
	require.NoError(t, err)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "skill", map[string]any{"name": "wait-for-agent"})}},
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("c2", "bash", map[string]any{"command": "uv run mngr list --format '{name}'"}),
			replay.ToolCall("c3", "bash", map[string]any{"command": "rm -rf build"}),
			replay.ToolCall("c4", "bash", map[string]any{"command": "uv run mngr list; rm -rf build"}),
			replay.ToolCall("c5", "echo", map[string]any{"text": "hi"}),
			replay.ToolCall("c6", "skill", map[string]any{"name": "writing-specs"}),
		}},
		replay.Response{Text: "waited"},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c7", "bash", map[string]any{"command": "rm -rf build"})}},
		replay.Response{Text: "removed"},
	)
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(c.Tool(), bash.tool(), echoTool()),
		agent.WithPermissions(pol), agent.WithStores(agent.Stores{Sessions: store}), agent.WithContext(c))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	evs, end := run(t, s, "wait for agent x")
	require.NoError(t, end.Err)
	loaded := resultOf(evs, "c1")
	require.NotNil(t, loaded)
	assert.Contains(t, loaded.Text(), "Until this turn ends, the only tools you can use are these (and skill): Bash(uv run mngr list *), Bash(while true; do*).")

	assert.Equal(t, []string{"uv run mngr list --format '{name}'"}, bash.commands(), "only what the skill allows ran, bypass mode notwithstanding")
	for _, id := range []string{"c3", "c4", "c5"} {
		r := resultOf(evs, id)
		require.NotNil(t, r, id)
		assert.True(t, r.IsError, id)
		assert.Equal(t, harness.CodeDenied, r.Code, id)
		assert.Contains(t, r.Text(), "The skill wait-for-agent limits the tools of this turn to Bash(uv run mngr list *), Bash(while true; do*)", id)
	}
	assert.False(t, resultOf(evs, "c6").IsError, "the skill tool stays usable")

	// The narrowing ends with the turn.
	_, end = run(t, s, "now clean up")
	require.NoError(t, end.Err)
	assert.Equal(t, []string{"uv run mngr list --format '{name}'", "rm -rf build"}, bash.commands())
}

func TestANarrowingSurvivesAResumedPause(t *testing.T) {
	c, err := skills.New(skills.Config{Embedded: []iofs.FS{os.DirFS("testdata/imbue-ai-mng")}})
	require.NoError(t, err)
	pol, err := permission.New(permission.Rules{Home: "/home/u"}) // default mode: bash asks
	require.NoError(t, err)
	store := session.NewJSONL(t.TempDir(), session.StoreConfig{})
	bash1 := &bashTool{}
	m1 := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c1", "skill", map[string]any{"name": "wait-for-agent"})}},
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c2", "bash", map[string]any{"command": "uv run mngr list"})}},
	)
	loop1, err := agent.New(agent.WithModel(m1), agent.WithTools(c.Tool(), bash1.tool()), agent.WithPermissions(pol),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithContext(c))
	require.NoError(t, err)
	s1, err := loop1.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	_, end := run(t, s1, "wait")
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	require.NoError(t, loop1.Close())

	bash2 := &bashTool{}
	m2 := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{replay.ToolCall("c3", "bash", map[string]any{"command": "rm -rf build"})}},
		replay.Response{Text: "done"},
	)
	approver := func(ctx context.Context, req permission.Request) (permission.Answer, error) {
		return permission.Answer{Allow: true}, nil
	}
	loop2, err := agent.New(agent.WithModel(m2), agent.WithTools(c.Tool(), bash2.tool()), agent.WithPermissions(pol), agent.WithApprover(approver),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithContext(c))
	require.NoError(t, err)
	defer loop2.Close()
	s2, err := loop2.ResumeSession(context.Background(), s1.Header().ID)
	require.NoError(t, err)
	var evs []agent.Event
	for ev := range s2.Resolve(context.Background(), map[string]permission.Answer{"c2": {Allow: true}}) {
		evs = append(evs, ev)
	}
	assert.Equal(t, []string{"uv run mngr list"}, bash2.commands(), "the approved call ran; the call outside the skill did not, though the approver allows everything")
	r := resultOf(evs, "c3")
	require.NotNil(t, r)
	assert.Contains(t, r.Text(), "The skill wait-for-agent limits the tools of this turn")
}

func TestSkillRules(t *testing.T) {
	c, err := skills.New(skills.Config{Embedded: []iofs.FS{os.DirFS("testdata/imbue-ai-mng"), os.DirFS("testdata/anthropics-skills")}})
	require.NoError(t, err)
	pol, err := permission.New(permission.Rules{Deny: []string{"Skill(wait-*)"}, Ask: []string{"Skill(mcp-builder)"}, Home: "/home/u"})
	require.NoError(t, err)
	m := replay.NewScripted(
		replay.Response{ToolCalls: []harness.ToolCall{
			replay.ToolCall("c1", "skill", map[string]any{"name": "wait-for-agent"}),
			replay.ToolCall("c2", "skill", map[string]any{"name": "writing-specs"}),
			replay.ToolCall("c3", "skill", map[string]any{"name": "mcp-builder"}),
		}},
		replay.Response{Text: "ok"},
	)
	var asked []string
	approver := func(ctx context.Context, req permission.Request) (permission.Answer, error) {
		asked = append(asked, req.Decision.Reason)
		return permission.Answer{Allow: false, Feedback: "not now"}, nil
	}
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(c.Tool()), agent.WithPermissions(pol), agent.WithApprover(approver))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	evs, end := run(t, s, "go")
	require.NoError(t, end.Err)
	denied := resultOf(evs, "c1")
	assert.Equal(t, harness.CodeDenied, denied.Code)
	assert.Contains(t, denied.Text(), "The skill call loading the skill wait-for-agent is denied by the rule Skill(wait-*)")
	assert.Contains(t, resultOf(evs, "c2").Text(), "Loaded the skill writing-specs")
	assert.Equal(t, []string{"the skill call loading the skill mcp-builder needs approval by the rule Skill(mcp-builder)"}, asked)
	assert.Equal(t, harness.CodeDenied, resultOf(evs, "c3").Code)
	assert.NotContains(t, everything("", m.Requests()[1].Messages), "The user's message contains an agent name", "a denied skill's body is never sent")
}
