//go:build linux

package mcp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/mcp"
)

// hostileConnect bounds the connection to the hostile server, whose
// tool list (with its 5 MB schema) takes long to decode under the race
// detector on a busy machine.
const hostileConnect = 3 * time.Minute

// lines is the text the hostile server's big tool returns (the same
// function as its own).
func lines(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %09d of a large result\n", i)
	}
	return b.String()[:n]
}

// tagged lists the live processes whose command line holds tag.
func tagged(tag string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(tag)) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && f[0] != "Z" && f[0] != "X" {
			out = append(out, pid)
		}
	}
	return out
}

func newTag() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "harness-hostile-" + hex.EncodeToString(b[:])
}

// logBuffer is a logger's output, safe to read while it is written.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func readAll(t *testing.T, store tools.OutputStore, locator string) []byte {
	t.Helper()
	rc, err := store.Open(context.Background(), locator)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}

// TestHostileServer runs the hostile server through Connect and its
// tools: the tools with a cyclic or a 5 MB schema are not offered (and
// the events say why) while the others are; a 20 MiB result reaches the
// output store whole without a restart; lines that are not JSON-RPC are
// skipped; a crash in a call restarts the server.
func TestHostileServer(t *testing.T) {
	bin := hostileBinary(t)
	leakcheck.Check(t)
	noLeakedProcesses(t)
	ev := newEvents()
	var logs logBuffer
	set := connect(t, []mcp.Server{{Name: "hostile", Command: bin}}, mcp.Config{Events: ev.add, TerminateDuration: 200 * time.Millisecond, ConnectTimeout: hostileConnect,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})

	// The schemas: the cyclic and the huge tools are skipped, the others
	// offered.
	tt := byName(set.Tools())
	assert.NotContains(t, tt, "mcp__hostile__cyclic")
	assert.NotContains(t, tt, "mcp__hostile__huge_schema")
	for _, n := range []string{"echo", "big", "big_image", "garbage", "crash", "spawn"} {
		assert.Contains(t, tt, "mcp__hostile__"+n)
	}
	skipped := map[string]mcp.Event{}
	ev.mu.Lock()
	for _, e := range ev.got {
		if e.Kind == mcp.EventToolSkipped {
			skipped[e.Tool] = e
		}
	}
	ev.mu.Unlock()
	require.Contains(t, skipped, "cyclic")
	assert.Contains(t, skipped["cyclic"].Message, "tools: cyclic: input schema refused: the schema has a reference cycle")
	assert.Contains(t, skipped["cyclic"].Message, "#/$defs/a → #/$defs/b → #/$defs/a")
	var se *tools.SchemaError
	require.ErrorAs(t, skipped["cyclic"].Err, &se)
	assert.Equal(t, []string{"#/$defs/a", "#/$defs/b", "#/$defs/a"}, se.Cycle)
	require.Contains(t, skipped, "huge_schema")
	assert.Contains(t, skipped["huge_schema"].Message, "its input schema is 5.0 MiB, more than the 32.0 KiB a tool may have (Config.MaxSchemaBytes)")
	assert.Contains(t, logs.String(), "mcp: tool skipped")

	store, err := spill.NewMemory(spill.StoreConfig{})
	require.NoError(t, err)
	e := env(false)
	e.Output = store
	ctx := context.Background()

	// A 20 MiB result: whole in the store, a preview for the model.
	const size = 20 << 20
	res := call(t, ctx, tt["mcp__hostile__big"], e, map[string]any{"n": size})
	require.False(t, res.IsError, "%.300s", res.Text())
	text := res.Text()
	assert.Less(t, len(text), 20_000, "the model sees a preview")
	assert.True(t, strings.HasPrefix(text, "line 000000000 of a large result\n"), "the head: %.100q", text)
	assert.Contains(t, text, "[the server's answer was 20.6 MiB, over the 16.0 MiB a message is read in memory: its text (20.0 MiB) was read from a temporary file, and saved whole to spill://")
	locator := regexp.MustCompile(`spill://[^ \]\n"]+\.txt`).FindString(text)
	require.NotEmpty(t, locator, "%.300q", text)
	whole := readAll(t, store, locator)
	assert.Equal(t, size, len(whole))
	assert.True(t, string(whole) == lines(size), "the store holds the result exactly")

	// Lines that are not JSON-RPC are skipped.
	res = call(t, ctx, tt["mcp__hostile__garbage"], e, map[string]any{})
	assert.Equal(t, "after the garbage", res.Text())
	assert.Contains(t, logs.String(), "is not a JSON-RPC message; skipped")
	assert.Equal(t, 0, set.Status()[0].Restarts, "nothing so far restarted the server")
	assert.True(t, set.Status()[0].Connected)
	ev.mu.Lock()
	for _, e := range ev.got {
		assert.NotEqual(t, mcp.EventStopped, e.Kind, "%s", e.Message)
	}
	ev.mu.Unlock()

	// A crash in a call: outcome unknown, restarted on the next call.
	res = call(t, ctx, tt["mcp__hostile__crash"], e, map[string]any{})
	assert.Equal(t, harness.Code("server_unavailable"), res.Code, res.Text())
	assert.Contains(t, res.Text(), "stopped while running crash, so the outcome is unknown")
	ev.wait(t, mcp.EventStopped)
	res = call(t, ctx, tt["mcp__hostile__echo"], e, map[string]any{"text": "back"})
	assert.Equal(t, "back", res.Text())
	assert.Equal(t, 1, set.Status()[0].Restarts)
}

// TestHostileLargeAnswers checks the other answers too large for memory,
// with the frame limit lowered to 1 MiB so that the data stays small:
// structured content repeating the text, a large image, an answer to a
// resource read, an answer past MaxResultBytes, and one that cannot be
// kept at all.
func TestHostileLargeAnswers(t *testing.T) {
	bin := hostileBinary(t)
	leakcheck.Check(t)
	noLeakedProcesses(t)
	const frame = 1 << 20
	set, err := mcp.ConnectWithFrameLimit(context.Background(), &mcp.Config{Servers: []mcp.Server{{Name: "hostile", Command: bin, Args: []string{"-resource-bytes", "2000000", "-no-huge-schema"}}},
		MaxResultBytes: 3 << 20, ConnectTimeout: hostileConnect}, frame)
	require.NoError(t, err)
	defer set.Close()
	store, err := spill.NewMemory(spill.StoreConfig{})
	require.NoError(t, err)
	e := env(false)
	e.Output = store
	ctx := context.Background()
	tt := byName(set.Tools())

	// A result over the frame limit, spooled and saved whole.
	res := call(t, ctx, tt["mcp__hostile__big"], e, map[string]any{"n": 2 << 20})
	require.False(t, res.IsError, "%.300s", res.Text())
	assert.Contains(t, res.Text(), "[the server's answer was 2.1 MiB, over the 1.0 MiB a message is read in memory: its text (2.0 MiB) was read from a temporary file, and saved whole to spill://")
	locator := regexp.MustCompile(`spill://[^ \]\n"]+\.txt`).FindString(res.Text())
	require.NotEmpty(t, locator)
	assert.True(t, string(readAll(t, store, locator)) == lines(2<<20), "the store holds the result exactly")

	// With structured content repeating the text: that is left out.
	res = call(t, ctx, tt["mcp__hostile__big"], e, map[string]any{"n": 1 << 20, "structured": true})
	require.False(t, res.IsError, "%.300s", res.Text())
	assert.Contains(t, res.Text(), "[structuredContent, which servers repeat as text left out (1.0 MiB): the result was too large to keep anything but its text]")

	// A large image: the text is kept, the image left out, and said.
	res = call(t, ctx, tt["mcp__hostile__big_image"], e, map[string]any{"n": 1 << 20})
	require.False(t, res.IsError, "%.300s", res.Text())
	assert.True(t, strings.HasPrefix(res.Text(), "a picture:\n"), "%.300q", res.Text())
	assert.Contains(t, res.Text(), "[an image or audio block left out (1.3 MiB): the result was too large to keep anything but its text]")

	// An answer over the frame limit to something other than a tool
	// call is an error, not a restart.
	res = call(t, ctx, tt["mcp_read_resource"], e, map[string]any{"server": "hostile", "uri": "hostile://big"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Text(), "more than the 1.0 MiB this client reads for anything but a tool result")

	// Past MaxResultBytes the answer is cut, and the result says so.
	res = call(t, ctx, tt["mcp__hostile__big"], e, map[string]any{"n": 4 << 20})
	assert.False(t, res.IsError)
	assert.Contains(t, res.Text(), "[the answer was cut at 3.0 MiB (Config.MaxResultBytes)")
	assert.Contains(t, res.Text(), "line 000000000 of a large result")

	// When the answer cannot be kept at all (no temporary directory),
	// the result says so, and the server goes on.
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	res = call(t, ctx, tt["mcp__hostile__big"], e, map[string]any{"n": 2 << 20})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Text(), "The tool ran, but its result (2.1 MiB) could not be kept for reading: open ")
	assert.Contains(t, res.Text(), "Check what the tool did before running it again.")
	res = call(t, ctx, tt["mcp__hostile__echo"], e, map[string]any{"text": "still here"})
	assert.Equal(t, "still here", res.Text())
	assert.Equal(t, 0, set.Status()[0].Restarts, "nothing restarted the server")
}

// TestHostileServerContainment: Close ends a grandchild of a stdio server
// that started its own session and ignores SIGTERM, in a PID namespace
// (where the kernel allows it) and in the process tree; the event, the
// log and the status say which containment was in force.
func TestHostileServerContainment(t *testing.T) {
	bin := hostileBinary(t)
	for _, mode := range []struct {
		name    string
		connect func(context.Context, *mcp.Config) (mcp.Set, error)
		want    string
	}{
		{"default", mcp.Connect, ""},
		{"process tree", mcp.ConnectWithoutNamespace, "process tree (no pid namespace: forced for a test)"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			leakcheck.Check(t)
			noLeakedProcesses(t)
			ev := newEvents()
			var logs logBuffer
			set, err := mode.connect(context.Background(), &mcp.Config{
				Servers: []mcp.Server{{Name: "hostile", Command: bin}}, Events: ev.add, TerminateDuration: 200 * time.Millisecond, ConnectTimeout: hostileConnect,
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			})
			require.NoError(t, err)
			closed := false
			defer func() {
				if !closed {
					set.Close()
				}
			}()
			st := set.Status()[0]
			if mode.want != "" {
				assert.Equal(t, mode.want, st.Containment)
			}
			require.NotEmpty(t, st.Containment)
			connected := ev.wait(t, mcp.EventConnected)
			assert.Contains(t, connected.Message, "; containment: "+st.Containment)
			assert.Contains(t, logs.String(), "containment=")

			tag := newTag()
			res := call(t, context.Background(), byName(set.Tools())["mcp__hostile__spawn"], env(false), map[string]any{"tag": tag})
			require.Contains(t, res.Text(), "spawned")
			deadline := time.Now().Add(time.Minute)
			for len(tagged(tag)) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			escapee := tagged(tag)
			require.Len(t, escapee, 1)
			require.NoError(t, set.Close(), "nothing survives")
			closed = true
			assert.Empty(t, tagged(tag), "the grandchild (pid %d) is gone", escapee[0])
		})
	}
}

// TestHostileServerThroughTheLoop runs the hostile server as the tool
// source of a real loop with a scripted model and the spill middleware,
// in a subprocess (this test binary run again): before the fix, the
// model's call of the tool with the cyclic schema ended the process.
func TestHostileServerThroughTheLoop(t *testing.T) {
	if os.Getenv("HARNESS_TEST_HOSTILE_LOOP") == "1" {
		hostileLoop(t)
		return
	}
	bin := hostileBinary(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileServerThroughTheLoop$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "HARNESS_TEST_HOSTILE_LOOP=1", "HARNESS_TEST_HOSTILE_BIN="+bin)
	out, err := cmd.CombinedOutput()
	text := string(out)
	if len(text) > 4000 {
		text = text[:2000] + "\n…\n" + text[len(text)-2000:]
	}
	require.NoError(t, err, "the loop's process failed or died:\n%s", text)
	assert.Contains(t, text, "--- PASS: TestHostileServerThroughTheLoop")
}

func hostileLoop(t *testing.T) {
	leakcheck.Check(t)
	noLeakedProcesses(t)
	set := connect(t, []mcp.Server{{Name: "hostile", Command: os.Getenv("HARNESS_TEST_HOSTILE_BIN")}}, mcp.Config{TerminateDuration: 200 * time.Millisecond, ConnectTimeout: hostileConnect})
	store, err := spill.NewMemory(spill.StoreConfig{})
	require.NoError(t, err)
	spilling, err := spill.Middleware(spill.Config{})
	require.NoError(t, err)
	llm := replay.NewScripted(
		replay.Call(
			replay.ToolCall("c1", "mcp__hostile__cyclic", map[string]any{"x": map[string]any{}}),
			replay.ToolCall("c2", "mcp__hostile__big", map[string]any{"n": 20 << 20}),
			replay.ToolCall("c3", "mcp__hostile__garbage", map[string]any{}),
		),
		replay.Call(
			replay.ToolCall("c4", "mcp__hostile__huge_schema", map[string]any{}),
			replay.ToolCall("c5", "mcp__hostile__crash", map[string]any{}),
		),
		replay.Call(replay.ToolCall("c6", "mcp__hostile__echo", map[string]any{"text": "after the crash"})),
		replay.Response{Text: "done"},
	)
	loop, err := agent.New(agent.WithModel(llm), agent.WithToolSource(set), agent.WithStores(agent.Stores{Output: store}),
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{spilling}}))
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(context.Background(), session.Header{})
	require.NoError(t, err)
	defer s.Close()
	for _, err := range s.Run(context.Background(), "go") {
		require.NoError(t, err)
	}
	reqs := llm.Requests()
	require.Len(t, reqs, 4)

	// The model is never offered the refused tools, and the request
	// carries no 5 MB schema.
	schemaBytes := 0
	for _, tool := range reqs[0].Tools {
		assert.NotEqual(t, "mcp__hostile__cyclic", tool.Name)
		assert.NotEqual(t, "mcp__hostile__huge_schema", tool.Name)
		schemaBytes += len(tool.Parameters)
	}
	assert.Less(t, schemaBytes, 4<<10, "the tool schemas of a request")

	r1 := toolResults(reqs[1])
	assert.Equal(t, harness.CodeUnknownTool, r1["c1"].Code, r1["c1"].Text())
	assert.False(t, r1["c2"].IsError, "%.300s", r1["c2"].Text())
	assert.Less(t, len(r1["c2"].Text()), 30_000)
	assert.Contains(t, r1["c2"].Text(), "[the server's answer was 20.6 MiB")
	locator := regexp.MustCompile(`spill://[^ \]\n"]+\.txt`).FindString(r1["c2"].Text())
	require.NotEmpty(t, locator)
	assert.Len(t, readAll(t, store, locator), 20<<20, "the whole result is in the output store")
	assert.Equal(t, "after the garbage", r1["c3"].Text())

	r2 := toolResults(reqs[2])
	assert.Equal(t, harness.CodeUnknownTool, r2["c4"].Code)
	assert.Equal(t, harness.Code("server_unavailable"), r2["c5"].Code)
	assert.Contains(t, r2["c5"].Text(), "outcome is unknown")
	r3 := toolResults(reqs[3])
	assert.Equal(t, "after the crash", r3["c6"].Text())
	assert.Equal(t, 1, set.Status()[0].Restarts, "only the crash restarted the server")
}
