package mcp_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/mcp"
	"github.com/go-harness/harness/tools/mcp/internal/testserver"
)

// events collects a set's events.
type events struct {
	mu  sync.Mutex
	got []mcp.Event
	ch  chan mcp.Event
}

func newEvents() *events { return &events{ch: make(chan mcp.Event, 100)} }

func (e *events) add(ev mcp.Event) {
	e.mu.Lock()
	e.got = append(e.got, ev)
	e.mu.Unlock()
	select {
	case e.ch <- ev:
	default:
	}
}

// wait returns the next event of kind, failing after a while.
func (e *events) wait(t *testing.T, kind mcp.EventKind) mcp.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-e.ch:
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event", kind)
		}
	}
}

func TestToolsAreNamedAndDeclared(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	set := connect(t, []mcp.Server{p.server("test")})
	ts := set.Tools()
	assert.Equal(t, []string{
		"mcp__test__add_tool", "mcp__test__big", "mcp__test__crash", "mcp__test__echo", "mcp__test__env", "mcp__test__fail",
		"mcp__test__image", "mcp__test__resources", "mcp__test__slow", "mcp__test__structured", "mcp__test__structured_echoed", "mcp__test__structured_more",
		"mcp_list_resources", "mcp_read_resource",
	}, names(ts), "the server's order (the SDK's server sorts by name), then the resource tools")
	_, err := tools.NewRegistry(ts...)
	require.NoError(t, err, "every tool passes the registry's checks")

	tt := byName(ts)
	echo := tt["mcp__test__echo"].Spec()
	assert.Equal(t, testserver.EchoSchema, string(echo.InputSchema), "the schema bytes are the server's, in its key order")
	assert.Equal(t, "Say the text back.", echo.Description)
	cases := []struct {
		name             string
		concurrent, side bool
		family           tools.Family
	}{
		{"mcp__test__echo", true, false, tools.FamilyProcess},    // readOnlyHint
		{"mcp__test__fail", false, true, tools.FamilyProcess},    // destructiveHint
		{"mcp__test__slow", false, true, tools.FamilyNetwork},    // openWorldHint
		{"mcp__test__image", false, true, tools.FamilyProcess},   // no annotations
		{"mcp_list_resources", true, false, tools.FamilyNetwork}, // the set's own
	}
	for _, c := range cases {
		s := tt[c.name].Spec()
		assert.Equal(t, c.concurrent, s.ConcurrencySafe, c.name)
		assert.Equal(t, c.side, s.SideEffects, c.name)
		assert.Equal(t, c.family, s.Family, c.name)
		assert.Equal(t, harness.RenderGeneric, s.Render, c.name)
	}

	// The same server again gives the same bytes: the request prefix
	// stays cacheable across sessions.
	again := connect(t, []mcp.Server{p.server("test")})
	for i, tool := range again.Tools() {
		assert.Equal(t, ts[i].Spec(), tool.Spec())
	}

	st := set.Status()
	require.Len(t, st, 1)
	assert.Equal(t, mcp.Status{Name: "test", Transport: "custom", Connected: true, Tools: 12, Resources: true,
		ServerName: "harness-test-server", Version: "1.0.0", Instructions: "A server for tests."}, st[0])
}

func TestContent(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	set := connect(t, []mcp.Server{p.server("test")})
	tt := byName(set.Tools())
	ctx := context.Background()

	cases := []struct {
		tool    string
		args    any
		images  bool
		isError bool
		code    harness.Code
		texts   []string
		images_ int
	}{
		{tool: "echo", args: map[string]any{"text": "hi", "count": 3}, texts: []string{"hi hi hi"}},
		{tool: "image", images: true, texts: []string{"a picture:", "image from test: image/png, 64x48 px"}, images_: 1},
		{tool: "image", texts: []string{"a picture:", "[image omitted (image/png image, "}},
		{tool: "resources", texts: []string{
			"Resource link: test://docs/readme (readme, text/markdown, 2.0 KiB): The readme. Read it with mcp_read_resource.",
			"Resource test://docs/note (text/plain):\nnote body",
			"Resource test://bin/blob: binary content (application/octet-stream, 4 bytes), not shown.",
			"[audio omitted: audio/wav, 8 bytes; audio cannot be shown to you]",
		}},
		{tool: "structured", texts: []string{`{"sum":5,"terms":[2,3]}`}},
		{tool: "structured_echoed", texts: []string{`{"sum": 5}`}},
		{tool: "structured_more", texts: []string{"Created issue 17.", `{"id":17,"url":"https://issues.example/17"}`}},
		{tool: "fail", isError: true, code: harness.CodeToolFailed, texts: []string{"the disk is full"}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			args := c.args
			if args == nil {
				args = map[string]any{}
			}
			e := env(c.images)
			res := call(t, ctx, tt["mcp__test__"+c.tool], e, args)
			assert.Equal(t, c.isError, res.IsError, "%+v", res)
			assert.Equal(t, c.code, res.Code)
			var texts []string
			var imgs []*harness.Image
			for _, b := range res.Content {
				switch b.Type {
				case harness.BlockText:
					texts = append(texts, b.Text)
				case harness.BlockImage:
					imgs = append(imgs, b.Image)
				}
			}
			require.Len(t, texts, len(c.texts), "%q", texts)
			for i, want := range c.texts {
				assert.True(t, strings.HasPrefix(texts[i], want), "text %d: %q does not start with %q", i, texts[i], want)
			}
			require.Len(t, imgs, c.images_)
			for _, img := range imgs {
				data, err := e.Attachments.Get(ctx, img.Digest)
				require.NoError(t, err, "the image is in the attachment store")
				assert.Equal(t, testserver.PNG(64, 48), data, "a small PNG passes through unchanged")
				assert.Equal(t, [2]int{64, 48}, [2]int{img.Width, img.Height})
			}
			require.NotNil(t, res.Render)
			assert.Equal(t, harness.RenderGeneric, res.Render.Kind)
		})
	}
}

func TestCancellationAndProgress(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	set := connect(t, []mcp.Server{p.server("test")})
	slow := byName(set.Tools())["mcp__test__slow"]

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *harness.ToolResult, 1)
	reports := make(chan tools.Progress, 8)
	c := &tools.Call{ID: "call-1", Name: slow.Spec().Name, Arguments: `{}`, Env: env(false),
		OnProgress: func(p tools.Progress) { reports <- p }}
	reg, err := tools.NewRegistry(slow)
	require.NoError(t, err)
	require.Nil(t, reg.Check(c))
	go func() {
		res, err := slow.Execute(ctx, c)
		if err != nil {
			res = &harness.ToolResult{IsError: true, Code: harness.CodeOf(err)}
		}
		done <- res
	}()
	for i := 1; i <= 2; i++ {
		select {
		case pr := <-reports:
			assert.Equal(t, tools.Progress{Progress: float64(i), Total: 4, Message: "working"}, pr,
				"the server's progress notification is the call's own progress report")
		case <-time.After(10 * time.Second):
			t.Fatal("no progress report")
		}
	}
	cancel()
	res := <-done
	assert.True(t, res.IsError)
	assert.Equal(t, harness.CodeAborted, res.Code, "the cancellation is the caller's error, which the dispatcher reports")
	require.Eventually(t, func() bool { return p.stats.Cancelled.Load() == 1 }, 10*time.Second, 10*time.Millisecond,
		"the server saw the cancel notification")

	// The connection still works.
	echo := byName(set.Tools())["mcp__test__echo"]
	assert.Equal(t, "ok", call(t, context.Background(), echo, env(false), map[string]any{"text": "ok"}).Text())
}

func TestToolListChanged(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	ev := newEvents()
	set := connect(t, []mcp.Server{p.server("test")}, mcp.Config{Events: ev.add})
	before := names(set.Tools())
	gen := set.Generation()

	add := byName(set.Tools())["mcp__test__add_tool"]
	res := call(t, context.Background(), add, env(false), map[string]any{"name": "aardvark"})
	require.False(t, res.IsError, res.Text())
	ev.wait(t, mcp.EventToolsChanged)

	after := names(set.Tools())
	assert.Greater(t, set.Generation(), gen)
	require.Len(t, after, len(before)+1)
	servers := len(before) - 2
	assert.Equal(t, before[:servers], after[:servers], "the tools it had keep their places")
	assert.Equal(t, "mcp__test__aardvark", after[servers], "a new tool comes after them (the server lists it first)")
	assert.Equal(t, before[servers:], after[servers+1:])
	got := call(t, context.Background(), byName(set.Tools())["mcp__test__aardvark"], env(false), map[string]any{})
	assert.Equal(t, "added aardvark", got.Text())
}

func TestCrashedServerRestarts(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	ev := newEvents()
	set := connect(t, []mcp.Server{p.server("test")}, mcp.Config{Events: ev.add, MaxRestarts: 1})
	tt := byName(set.Tools())
	e := env(false)

	res := call(t, context.Background(), tt["mcp__test__crash"], e, map[string]any{})
	assert.True(t, res.IsError)
	assert.Equal(t, harness.Code("server_unavailable"), res.Code)
	assert.Contains(t, res.Text(), "The MCP server test stopped while running crash, so the outcome is unknown")
	stopped := ev.wait(t, mcp.EventStopped)
	assert.Equal(t, "test", stopped.Server)
	assert.False(t, set.Status()[0].Connected)
	assert.Len(t, set.Tools(), 14, "a stopped server's tools stay offered: the next call restarts it")

	res = call(t, context.Background(), tt["mcp__test__echo"], e, map[string]any{"text": "back"})
	assert.Equal(t, "back", res.Text(), "restarted on the next call")
	assert.Equal(t, 1, set.Status()[0].Restarts)
	p.mu.Lock()
	assert.Equal(t, 2, p.conns)
	p.mu.Unlock()

	// Beyond the limit, the model is told to stop trying.
	res = call(t, context.Background(), tt["mcp__test__crash"], e, map[string]any{})
	assert.Equal(t, harness.Code("server_unavailable"), res.Code)
	ev.wait(t, mcp.EventStopped)
	res = call(t, context.Background(), tt["mcp__test__echo"], e, map[string]any{"text": "again"})
	assert.Equal(t, harness.Code("server_unavailable"), res.Code)
	assert.Contains(t, res.Text(), "is not restarted again (1 restarts allowed, 1 used). Do not call its tools again")
}

// A negative MaxRestarts means a server that stopped is never started
// again.
func TestNoRestarts(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	ev := newEvents()
	set := connect(t, []mcp.Server{p.server("test")}, mcp.Config{Events: ev.add, MaxRestarts: -1})
	tt := byName(set.Tools())
	e := env(false)
	res := call(t, context.Background(), tt["mcp__test__crash"], e, map[string]any{})
	assert.Equal(t, harness.Code("server_unavailable"), res.Code)
	ev.wait(t, mcp.EventStopped)
	res = call(t, context.Background(), tt["mcp__test__echo"], e, map[string]any{"text": "back"})
	assert.Equal(t, harness.Code("server_unavailable"), res.Code)
	assert.Contains(t, res.Text(), "is not restarted again (0 restarts allowed, 0 used)")
	assert.Equal(t, 0, set.Status()[0].Restarts)
	p.mu.Lock()
	assert.Equal(t, 1, p.conns)
	p.mu.Unlock()
}

func TestResourcesAndPrompts(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	set := connect(t, []mcp.Server{p.server("test")})
	tt := byName(set.Tools())
	ctx := context.Background()

	list := call(t, ctx, tt["mcp_list_resources"], env(false), map[string]any{})
	assert.Equal(t, "test:\n  test://docs/readme (readme, text/markdown): The readme.", list.Text())
	one := call(t, ctx, tt["mcp_list_resources"], env(false), map[string]any{"server": "test"})
	assert.Equal(t, list.Text(), one.Text())
	unknown := call(t, ctx, tt["mcp_list_resources"], env(false), map[string]any{"server": "nope"})
	assert.Equal(t, harness.Code("unknown_server"), unknown.Code)
	assert.Equal(t, `There is no MCP server named "nope". Servers: test.`, unknown.Text())

	read := call(t, ctx, tt["mcp_read_resource"], env(false), map[string]any{"server": "test", "uri": "test://docs/readme"})
	assert.False(t, read.IsError)
	assert.Equal(t, "Resource test://docs/readme (text/markdown):\n# Readme\nhello", read.Text())
	missing := call(t, ctx, tt["mcp_read_resource"], env(false), map[string]any{"server": "test", "uri": "test://none"})
	assert.True(t, missing.IsError)
	assert.Equal(t, harness.CodeNotFound, missing.Code)
	assert.Contains(t, missing.Text(), "could not read test://none")

	prompts, err := set.Prompts(ctx, "test")
	require.NoError(t, err)
	assert.Equal(t, []*sdk.Prompt{{Name: "review", Description: "Review code.",
		Arguments: []*sdk.PromptArgument{{Name: "path", Required: true}}}}, prompts)
	_, err = set.Prompts(ctx, "nope")
	assert.Equal(t, harness.Code("unknown_server"), harness.CodeOf(err))
}

func TestNameCollisions(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	long := strings.Repeat("s", 40)
	set := connect(t, []mcp.Server{p.server("a.b"), p.server(long)})
	ts := set.Tools()
	_, err := tools.NewRegistry(ts...)
	require.NoError(t, err, "no two tools share a name, and every name is valid")
	got := names(ts)
	assert.Contains(t, got, "mcp__a_b__echo", "a name keeps the server's spelling where providers accept it")
	long40 := 0
	for _, n := range got {
		assert.LessOrEqual(t, len(n), 64)
		if strings.HasPrefix(n, "mcp__sss") {
			long40++
			assert.True(t, strings.HasPrefix(n, "mcp__"+long+"__"), "the server's part of %s stays whole", n)
		}
	}
	assert.Equal(t, 12, long40)
}

func TestConnectErrors(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	failing := mcp.Server{Name: "broken", Transport: func(context.Context) (sdk.Transport, error) {
		return nil, errors.New("no route")
	}}
	set, err := mcp.Connect(context.Background(), &mcp.Config{Servers: []mcp.Server{failing, p.server("test")}})
	require.NotNil(t, set, "the servers that connected are usable")
	defer set.Close()
	require.Error(t, err)
	assert.Equal(t, harness.Code("server_unavailable"), harness.CodeOf(err))
	assert.Contains(t, err.Error(), `mcp: server "broken" could not be started: no route`)
	assert.Len(t, set.Tools(), 14)
	st := set.Status()
	assert.False(t, st[0].Connected)
	assert.Error(t, st[0].Err)
	assert.True(t, st[1].Connected)

	for _, c := range []struct {
		cfg  mcp.Config
		want string
	}{
		{mcp.Config{Servers: []mcp.Server{{Command: "x"}}}, "has no name"},
		{mcp.Config{Servers: []mcp.Server{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}}, `two servers are named "a"`},
		{mcp.Config{Servers: []mcp.Server{{Name: "a"}}}, "set exactly one of Command"},
		{mcp.Config{Servers: []mcp.Server{{Name: "a", Command: "x", URL: "http://h"}}}, "set exactly one of Command"},
	} {
		s, err := mcp.Connect(context.Background(), &c.cfg)
		assert.Nil(t, s)
		assert.Equal(t, harness.Code("invalid_config"), harness.CodeOf(err))
		assert.ErrorContains(t, err, c.want)
	}
	for _, c := range []struct {
		cfg  mcp.Config
		want string
	}{
		{mcp.Config{ConnectTimeout: -time.Second}, "Config.ConnectTimeout -1s: the connect timeout must not be negative"},
		{mcp.Config{TerminateDuration: -1}, "Config.TerminateDuration -1ns: the terminate duration must not be negative"},
		{mcp.Config{MaxSchemaBytes: -1}, "Config.MaxSchemaBytes -1: the bound must not be negative (zero keeps the default, 32 KiB)"},
		{mcp.Config{MaxResultBytes: -1}, "Config.MaxResultBytes -1: the bound must not be negative (zero keeps the default, 256 MiB)"},
		{mcp.Config{MaxTools: -1}, "Config.MaxTools -1: the bound must not be negative (zero keeps the default, 128)"},
	} {
		s, err := mcp.Connect(context.Background(), &c.cfg)
		assert.Nil(t, s)
		assert.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err))
		assert.ErrorContains(t, err, c.want)
	}
}

func TestClosedSet(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	set := connect(t, []mcp.Server{p.server("test")})
	echo := byName(set.Tools())["mcp__test__echo"]
	require.NoError(t, set.Close())
	require.NoError(t, set.Close(), "Close is idempotent")
	res := call(t, context.Background(), echo, env(false), map[string]any{"text": "x"})
	assert.Equal(t, harness.CodeClosed, res.Code)
}

// TestMaxSchemaBytes: a tool whose schema is over the configured bound
// is skipped with an event; the server's other tools are offered.
func TestMaxSchemaBytes(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	ev := newEvents()
	set := connect(t, []mcp.Server{p.server("test")}, mcp.Config{MaxSchemaBytes: len(testserver.EchoSchema) - 1, Events: ev.add})
	tt := byName(set.Tools())
	assert.NotContains(t, tt, "mcp__test__echo")
	assert.Contains(t, tt, "mcp__test__image", "a small schema is offered")
	skipped := ev.wait(t, mcp.EventToolSkipped)
	assert.Equal(t, "echo", skipped.Tool)
	assert.Contains(t, skipped.Message, "its input schema is 166 bytes, more than the 165 bytes a tool may have (Config.MaxSchemaBytes)")
}

// TestMaxTools: a server that offers more tools than the bound has the
// first MaxTools offered, in its order, and one event names the first
// tool left out.
func TestMaxTools(t *testing.T) {
	leakcheck.Check(t)
	p := newInProcess(t)
	ev := newEvents()
	set := connect(t, []mcp.Server{p.server("test")}, mcp.Config{MaxTools: 1, Events: ev.add})
	var names []string
	for _, tl := range set.Tools() {
		if strings.HasPrefix(tl.Spec().Name, "mcp__test__") {
			names = append(names, tl.Spec().Name)
		}
	}
	require.Len(t, names, 1, "one tool offered: %v", names)
	skipped := ev.wait(t, mcp.EventToolSkipped)
	assert.Contains(t, skipped.Message, "the server offers more than 1 tools (Config.MaxTools)")
	assert.NotEqual(t, strings.TrimPrefix(names[0], "mcp__test__"), skipped.Tool)
}
