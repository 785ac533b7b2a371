package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	pngenc "image/png"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

const buggy = `package main

import "fmt"

// greeting returns the text main prints.
func greeting() string {
	return "Hello, wrold!"
}

func main() {
	fmt.Println(greeting())
}
`

// fixScript is a model that reads main.go, fixes the typo and says so.
func fixScript() []reply {
	return []reply{
		sse(role(), reasoning("I should read main.go "), reasoning("first."),
			toolCall(0, "call_1", "read", map[string]any{"file_path": "main.go"}),
			finish("tool_calls"), usage(1200, 40, 0)),
		sse(role(), toolCall(0, "call_2", "edit", map[string]any{
			"file_path": "main.go", "old_string": `"Hello, wrold!"`, "new_string": `"Hello, world!"`,
		}), finish("tool_calls"), usage(1500, 60, 1024)),
		sse(role(), text("Fixed the typo: main.go "), text("now prints \"Hello, world!\"."), finish("stop"), usage(1700, 20, 1408)),
	}
}

// A headless turn reads and edits a real file: the file changes on disk,
// and the output shows the location card, the diff card, the answer and
// the turn's usage, without escape sequences (stdout is not a terminal).
func TestHeadlessReadAndEdit(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, fixScript()...)
	ws := workspace(t, map[string]string{"main.go": buggy})
	sessions := t.TempDir()

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "fix the typo in main.go")
	require.Equal(t, exitOK, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	got, err := os.ReadFile(filepath.Join(ws, "main.go"))
	require.NoError(t, err)
	assert.Contains(t, string(got), `return "Hello, world!"`)
	assert.NotContains(t, string(got), "wrold")

	for _, want := range []string{
		"› fix the typo in main.go",
		"I should read main.go first.",
		"● Read main.go (lines 1-12 of 12)",
		"I should read main.go first.\n\n● Read main.go (lines 1-12 of 12)\n  main.go:1-12\n",
		"● Edit main.go  +1 -1",
		"  @@ -4,7 +4,7 @@",
		"  @@ -4,7 +4,7 @@\n   4\n   5   // greeting returns the text main prints.\n",
		"   7 -     return \"Hello, wrold!\"\n   7 +     return \"Hello, world!\"\n   8   }\n",
		"  10   func main() {\n\nFixed the typo: main.go now prints \"Hello, world!\".\n",
		"── completed · 3 steps",
		"4.4k in (2.4k cached, 55%) · 120 out",
		"resume with -resume ",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.NotContains(t, r.stdout, "\x1b", "no escape sequences when stdout is not a terminal")
	assert.NotContains(t, r.stdout, ws+"/", "paths in the workspace are shown relative to it")

	reqs := p.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "Bearer "+testKey, reqs[0].Header.Get("Authorization"))
	last := reqs[2].Text(t)
	assert.Contains(t, last, "fix the typo in main.go")
	assert.Contains(t, last, "Hello, wrold!", "the read result went back to the model")
	assert.Contains(t, reqs[2].Text(t), "call_2")
}

// -json writes every event as one JSON line: a session line first, then
// the turn's events in order, ending with turn_end.
func TestJSONEventStream(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, fixScript()...)
	ws := workspace(t, map[string]string{"main.go": buggy})

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-json", "-p", "fix the typo")
	require.Equal(t, exitOK, r.code, "stderr:\n%s", r.stderr)
	lines := jsonLines(t, r.stdout)

	require.Equal(t, "session", lines[0]["type"])
	assert.Equal(t, ws, lines[0]["cwd"])
	assert.Equal(t, "test-model", lines[0]["model"])
	assert.NotEmpty(t, lines[0]["session_id"])

	var types []string
	for _, l := range lines {
		if len(types) == 0 || types[len(types)-1] != l["type"] {
			types = append(types, l["type"].(string))
		}
	}
	assert.Equal(t, []string{
		"session",
		"reasoning_delta", "usage", "tool_call_start", "tool_call_end", "step_end",
		"usage", "tool_call_start", "tool_call_end", "step_end",
		"text_delta", "usage", "step_end",
		"turn_end",
	}, types, "event types in order (runs of one type folded)")

	end := lines[len(lines)-1]
	assert.Equal(t, "turn_end", end["type"])
	assert.Equal(t, "completed", end["reason"])
	assert.EqualValues(t, 3, end["steps"])
	assert.Nil(t, end["error"])

	var editEnd map[string]any
	for _, l := range lines {
		if l["type"] == "tool_call_end" && l["call"].(map[string]any)["name"] == "edit" {
			editEnd = l
		}
	}
	require.NotNil(t, editEnd)
	rd := editEnd["result"].(map[string]any)["render"].(map[string]any)
	assert.Equal(t, "diff", rd["kind"])
	assert.EqualValues(t, 1, rd["diff"].(map[string]any)["added"])
	assert.Contains(t, r.stderr, "resume with -resume", "messages for people go to stderr")
}

// A resumed session continues the same history: the next request
// carries the first turn's prompt and answer.
func TestResumeContinuesHistory(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, say("The answer is 42."), say("You asked about the answer."))
	ws := workspace(t, nil)
	sessions := t.TempDir()

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "what is the answer?")
	require.Equal(t, exitOK, r.code, r.stderr)
	infos, err := session.NewJSONL(sessions, session.StoreConfig{}).List(context.Background(), session.ListOptions{})
	require.NoError(t, err)
	require.Len(t, infos, 1)
	id := infos[0].Header.ID
	assert.Contains(t, r.stdout, "session "+id+" (new)")

	// No -C: the workspace is the session's.
	r = runCLI(t, p.env(), "", "-sessions", sessions, "-resume", id, "what did I ask?")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "session "+id+" (resumed, 2 messages)")
	assert.Contains(t, r.stdout, "· "+ws)

	reqs := p.Requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Messages(t)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m["role"].(string))
	}
	assert.Equal(t, []string{"system", "user", "assistant", "user"}, roles)
	assert.Contains(t, reqs[1].Text(t), "what is the answer?")
	assert.Contains(t, reqs[1].Text(t), "The answer is 42.")
	assert.Contains(t, reqs[1].Text(t), "what did I ask?")

	infos, err = session.NewJSONL(sessions, session.StoreConfig{}).List(context.Background(), session.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, infos, 1, "resuming adds no session")
}

// -continue picks the newest session of the workspace, not a newer one
// of another workspace.
func TestContinuePicksLatestOfWorkspace(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, say("a1"), say("a2"), say("b1"), say("continued"))
	wsA, wsB := workspace(t, nil), workspace(t, nil)
	sessions := t.TempDir()

	ids := map[string]string{}
	for i, run := range []struct{ ws, prompt string }{{wsA, "prompt-a-one"}, {wsA, "prompt-a-two"}, {wsB, "prompt-b-one"}} {
		r := runCLI(t, p.env(), "", "-C", run.ws, "-sessions", sessions, "-json", run.prompt)
		require.Equal(t, exitOK, r.code, r.stderr)
		id := jsonLines(t, r.stdout)[0]["session_id"].(string)
		ids[run.prompt] = id
		// Make the order of the logs' times certain.
		when := time.Now().Add(time.Duration(i-10) * time.Minute)
		require.NoError(t, os.Chtimes(filepath.Join(sessions, id+".jsonl"), when, when))
	}

	r := runCLI(t, p.env(), "", "-C", wsA, "-sessions", sessions, "-continue", "go on")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "session "+ids["prompt-a-two"]+" (resumed")
	last := p.Requests()[3].Text(t)
	assert.Contains(t, last, "prompt-a-two")
	assert.NotContains(t, last, "prompt-a-one")
	assert.NotContains(t, last, "prompt-b-one")

	r = runCLI(t, p.env(), "", "-C", workspace(t, nil), "-sessions", sessions, "-continue", "go on")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "no earlier session of")
}

// A key the provider refuses ends the turn with the auth code, the
// provider's message and what to do; exit status 1.
func TestBadKey(t *testing.T) {
	leakcheck.Check(t)
	refuse := errorReply(http.StatusUnauthorized,
		`{"error":{"message":"Authentication Fails, your api key is invalid","type":"authentication_error","code":"invalid_request_error"}}`)
	p := newProvider(t, refuse, refuse)
	ws := workspace(t, nil)

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "hello")
	assert.Equal(t, exitFailed, r.code)
	assert.Contains(t, r.stderr, "error [auth]")
	assert.Contains(t, r.stderr, "Authentication Fails, your api key is invalid")
	assert.Contains(t, r.stderr, "refused the API key: check DEEPSEEK_API_KEY")
	assert.Contains(t, r.stdout, "── error")
	assert.NotContains(t, r.stdout+r.stderr, testKey)

	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-json", "hello")
	assert.Equal(t, exitFailed, r.code)
	lines := jsonLines(t, r.stdout)
	end := lines[len(lines)-1]
	assert.Equal(t, "turn_end", end["type"])
	assert.Equal(t, "error", end["reason"])
	assert.Equal(t, "auth", end["error"].(map[string]any)["code"])
}

// With no model in the environment the CLI explains both ways to set
// one and exits with status 2, before creating anything.
func TestNoKey(t *testing.T) {
	sessions := filepath.Join(t.TempDir(), "sessions")
	r := runCLI(t, envOf("HOME="+t.TempDir()), "", "-sessions", sessions, "hello")
	assert.Equal(t, exitUsage, r.code)
	for _, want := range []string{"no model configured", "export DEEPSEEK_API_KEY=", "export HARNESS_BASE_URL=", "HARNESS_API_KEY=", "HARNESS_MODEL="} {
		assert.Contains(t, r.stderr, want)
	}
	assert.Empty(t, r.stdout)
	assert.NoDirExists(t, sessions)

	r = runCLI(t, envOf("HARNESS_BASE_URL=http://localhost:1"), "", "-sessions", sessions, "hello")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "HARNESS_MODEL is not")
}

func TestUsageErrors(t *testing.T) {
	p := newProvider(t)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	sessions := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"-bogus"}, "flag provided but not defined: -bogus"},
		{"bad number", []string{"-max-steps", "many"}, `invalid value "many" for flag -max-steps`},
		{"negative steps", []string{"-max-steps", "-3", "x"}, "-max-steps must be positive"},
		{"negative window", []string{"-context-window", "-1", "x"}, "-context-window must be positive"},
		{"two prompts", []string{"-p", "one", "two"}, "either with -p or after the flags"},
		{"empty prompt", []string{"-p", " "}, "the prompt is empty"},
		{"resume and continue", []string{"-resume", "20260101-000000-abcdef012345", "-continue"}, "give one of them"},
		{"bad session id", []string{"-sessions", sessions, "-resume", "../etc/passwd"}, "is not a session id"},
		{"unknown session", []string{"-sessions", sessions, "-resume", "20260101-000000-abcdef012345", "x"}, "no session 20260101-000000-abcdef012345"},
		{"missing workspace", []string{"-sessions", sessions, "-C", filepath.Join(t.TempDir(), "nope"), "x"}, "not a directory"},
		{"workspace is a file", []string{"-sessions", sessions, "-C", file, "x"}, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, p.env(), "", tc.args...)
			assert.Equal(t, exitUsage, r.code)
			assert.Contains(t, r.stderr, tc.want)
			assert.Empty(t, r.stdout)
		})
	}
	assert.Empty(t, p.Requests(), "no usage error reaches the model")

	r := runCLI(t, p.env(), "", "-h")
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stderr, "usage: coder [flags] [prompt]")
	assert.Contains(t, r.stderr, "-max-steps n")
	for _, v := range []string{"DEEPSEEK_BASE_URL", "HARNESS_DIALECT", "deepseek, openai or generic"} {
		assert.Contains(t, r.stderr, v)
	}
}

// -resume of a session that worked outside -C is refused.
func TestResumeOutsideWorkspace(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, say("ok"))
	sessions := t.TempDir()
	wsA, wsB := workspace(t, nil), workspace(t, nil)
	r := runCLI(t, p.env(), "", "-C", wsA, "-sessions", sessions, "-json", "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	id := jsonLines(t, r.stdout)[0]["session_id"].(string)

	r = runCLI(t, p.env(), "", "-C", wsB, "-sessions", sessions, "-resume", id, "hi")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "run it with -C "+wsA)
}

// The prompt loop runs one turn per line (a trailing backslash joins
// lines), keeps one session, and ends at end of input.
func TestPromptLoop(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, say("one"), say("two"))
	ws := workspace(t, nil)

	r := runCLI(t, p.env(), "first question\n\n/usage\nsecond \\\nquestion\n", "-C", ws, "-sessions", t.TempDir())
	require.Equal(t, exitOK, r.code, r.stderr)
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	second := reqs[1].Messages(t)
	require.Len(t, second, 4)
	assert.Equal(t, "first question", second[1]["content"])
	assert.Equal(t, "second \nquestion", second[3]["content"])
	assert.Contains(t, r.stdout, "› first question", "prompts read from a pipe are echoed")
	assert.Contains(t, r.stdout, "session tokens: 100 in")
	assert.Equal(t, 2, strings.Count(r.stdout, "── completed"))
}

// -max-steps stops a turn that keeps calling tools; exit status 1.
func TestMaxSteps(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t, call(toolCall(0, "c1", "read", map[string]any{"file_path": "a.txt"})))
	ws := workspace(t, map[string]string{"a.txt": "alpha\n"})

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-max-steps", "1", "read a.txt")
	assert.Equal(t, exitFailed, r.code)
	assert.Contains(t, r.stdout, "── step_limit · 1 step")
	assert.Contains(t, r.stdout, "the turn stopped at the step limit")
	assert.Len(t, p.Requests(), 1)
}

// A bash call renders as a terminal card: the command, the last lines of
// its output and its exit status. A failed tool renders its code and
// message.
func TestTerminalAndErrorCards(t *testing.T) {
	leakcheck.Check(t)
	p := newProvider(t,
		call(
			toolCall(0, "c1", "bash", map[string]any{"command": "for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; done; exit 3"}),
		),
		call(toolCall(0, "c2", "edit", map[string]any{"file_path": "missing.go", "old_string": "a", "new_string": "b"})),
		say("done"),
	)
	ws := workspace(t, nil)

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "count")
	require.Equal(t, exitOK, r.code, r.stderr)
	for _, want := range []string{
		"⋯ bash output:\n  │ line 1\n",
		"  │ line 10\n● $ for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; done; exit 3\n",
		"  │ (10 lines of output above)\n  exit 3\n",
		"✗ edit ",
		"not_found",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.Equal(t, 1, strings.Count(r.stdout, "│ line 2\n"), "piped, each line of output is printed once")
}

// Ctrl-C cancels the running turn: the turn is logged as cancelled, the
// exit status is 130, and resuming the session carries on from it.
func TestInterruptCancelsTurn(t *testing.T) {
	leakcheck.Check(t)
	arrived := make(chan struct{})
	hang := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: "+role()+"\n\n"+"data: "+text("Working on it")+"\n\n")
		w.(http.Flusher).Flush()
		close(arrived)
		<-r.Context().Done()
	}
	p := newProvider(t, reply{Handler: hang})
	ws := workspace(t, nil)
	sessions := t.TempDir()

	interrupts := make(chan os.Signal, 2)
	var out, errOut lockedBuffer
	go func() {
		<-arrived
		out.waitFor("Working on it") // the partial answer is shown
		interrupts <- os.Interrupt
	}()
	r := runTo(context.Background(), &out, &errOut, p.env(), strings.NewReader(""), interrupts, "-C", ws, "-sessions", sessions, "a long task")
	assert.Equal(t, exitInterrupted, r.code)
	assert.Contains(t, r.stdout, "Working on it")
	assert.Contains(t, r.stdout, "cancelling the turn")
	assert.Contains(t, r.stdout, "── cancelled")
	assert.Contains(t, r.stdout, "turn cancelled; it is kept in the session log")

	store := session.NewJSONL(sessions, session.StoreConfig{})
	infos, err := store.List(context.Background(), session.ListOptions{})
	require.NoError(t, err)
	require.Len(t, infos, 1)
	tr, err := store.Load(context.Background(), infos[0].Header.ID)
	require.NoError(t, err)
	var ended *session.TurnEnded
	for _, e := range tr.Events {
		if te, ok := e.Data.(*session.TurnEnded); ok {
			ended = te
		}
	}
	require.NotNil(t, ended)
	assert.Equal(t, session.ReasonCancelled, ended.Reason)

	p.add(say("Picking up where we left off."))
	r = runCLI(t, p.env(), "", "-sessions", sessions, "-continue", "-C", ws, "go on")
	require.Equal(t, exitOK, r.code, r.stderr)
	resumed := p.Requests()[1].Text(t)
	assert.Contains(t, resumed, "a long task")
	assert.Contains(t, resumed, "Working on it", "the partial answer the user saw is part of the history")
}

// In the prompt loop, Ctrl-C twice during a turn leaves the program
// (whether the second arrives while cancelling or at the prompt), and
// Ctrl-C at the prompt leaves it too.
func TestInterruptTwiceExits(t *testing.T) {
	leakcheck.Check(t)
	arrived := make(chan struct{})
	hang := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: "+role()+"\n\n")
		w.(http.Flusher).Flush()
		close(arrived)
		<-r.Context().Done()
	}
	p := newProvider(t, reply{Handler: hang})
	ws := workspace(t, nil)

	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	go io.WriteString(stdinW, "a long task\n")
	interrupts := make(chan os.Signal, 2)
	go func() {
		<-arrived
		interrupts <- os.Interrupt
		interrupts <- os.Interrupt
	}()
	r := runWith(t, context.Background(), p.env(), stdinR, interrupts, "-C", ws, "-sessions", t.TempDir())
	stdinW.Close()
	assert.Equal(t, exitInterrupted, r.code)
	assert.Len(t, p.Requests(), 1)

	// At the prompt: one Ctrl-C is enough.
	stdinR, stdinW = io.Pipe()
	defer stdinW.Close()
	interrupts <- os.Interrupt
	r = runWith(t, context.Background(), p.env(), stdinR, interrupts, "-C", ws, "-sessions", t.TempDir())
	stdinW.Close()
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.stdout, "resume with -resume")
}

// Stopping the program (SIGTERM ends ctx) during a turn cancels it and
// exits at once.
func TestContextEndStops(t *testing.T) {
	leakcheck.Check(t)
	arrived := make(chan struct{})
	hang := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: "+role()+"\n\n")
		w.(http.Flusher).Flush()
		close(arrived)
		<-r.Context().Done()
	}
	p := newProvider(t, reply{Handler: hang})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-arrived
		cancel()
	}()
	r := runWith(t, ctx, p.env(), strings.NewReader(""), nil, "-C", workspace(t, nil), "-sessions", t.TempDir(), "task")
	assert.Equal(t, exitInterrupted, r.code)
}

func TestDefaultSessionsDir(t *testing.T) {
	d, err := defaultSessionsDir(envOf("XDG_DATA_HOME=/data", "HOME=/home/u"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("/data", "harness", "sessions"), d)

	d, err = defaultSessionsDir(envOf("XDG_DATA_HOME=relative", "HOME=/home/u"))
	require.NoError(t, err)
	assert.NotContains(t, d, "relative", "a relative XDG_DATA_HOME is ignored, as the spec says")
	assert.True(t, strings.HasPrefix(d, filepath.Join("/home/u")), d)

	_, err = defaultSessionsDir(envOf())
	assert.Error(t, err)

	// The default is used when -sessions is not given.
	leakcheck.Check(t)
	p := newProvider(t, say("ok"))
	home := t.TempDir()
	r := runCLI(t, p.env("XDG_DATA_HOME="+home), "", "-C", workspace(t, nil), "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	entries, err := os.ReadDir(filepath.Join(home, "harness", "sessions"))
	require.NoError(t, err)
	var logs int
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			logs++
		}
	}
	assert.Equal(t, 1, logs)
}

// The economy is wired in: the third identical call in a row brings the
// repeat guard's reminder, shown and sent to the model, and a command's
// oversized output is saved whole under <sessions>/spill with a
// spill:// locator in what the model sees.
func TestRemindersAndSpill(t *testing.T) {
	leakcheck.Check(t)
	readA := func(id string) reply {
		return call(toolCall(0, id, "read", map[string]any{"file_path": "a.txt"}))
	}
	p := newProvider(t,
		readA("r1"), readA("r2"), readA("r3"),
		call(toolCall(0, "b1", "bash", map[string]any{"command": "seq 1 20000"})),
		say("done"),
	)
	ws := workspace(t, map[string]string{"a.txt": "alpha\n"})
	sessions := t.TempDir()

	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "look")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stdout, "⚑ repeat_guard: "), r.stdout)
	reqs := p.Requests()
	require.Len(t, reqs, 5)
	assert.NotContains(t, reqs[2].Text(t), "times in a row")
	assert.Contains(t, reqs[3].Text(t), "You have called read 3 times in a row")
	assert.Contains(t, r.stdout, "⚑ repeat_guard: You have called read 3 times in a row")

	assert.Contains(t, r.stdout, "● $ seq 1 20000\n")
	assert.Contains(t, r.stdout, "  │ 20000\n")
	last := reqs[4].Text(t)
	assert.Contains(t, last, "spill://")
	assert.Less(t, len(last), 60_000, "the model got a preview, not 108 kB")

	var saved []string
	require.NoError(t, filepath.WalkDir(filepath.Join(sessions, "spill"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			saved = append(saved, p)
		}
		return err
	}))
	require.NotEmpty(t, saved)
	var total int
	for _, f := range saved {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		total += len(b)
	}
	assert.GreaterOrEqual(t, total, 50_000, "the whole output is kept on disk")
}

// -image declares image input for a model the catalog does not know:
// read_image is offered, the image is stored beside the session logs,
// and the next request carries it. Without -image the tool is not
// offered at all.
func TestReadImageWithImageFlag(t *testing.T) {
	leakcheck.Check(t)
	var png bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	require.NoError(t, pngenc.Encode(&png, img))
	ws := workspace(t, map[string]string{"shot.png": png.String()})
	sessions := t.TempDir()

	p := newProvider(t, say("no images here"))
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, string(p.Requests()[0].Body), `"read_image"`)

	p = newProvider(t, call(toolCall(0, "i1", "read_image", map[string]any{"file_path": "shot.png"})), say("A red dot."))
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-image", "what is in shot.png?")
	require.Equal(t, exitOK, r.code, r.stderr)
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, string(reqs[0].Body), `"read_image"`)
	assert.Contains(t, string(reqs[1].Body), "data:image/png;base64,")
	assert.Contains(t, r.stdout, "● read_image shot.png\n")
	assert.Contains(t, r.stdout, "  shot.png: image/png, 4x3 px")

	// The attachments also hold the workspace checkpoints' contents.
	sum := sha256.Sum256(png.Bytes())
	assert.FileExists(t, filepath.Join(sessions, "attachments", "sha256", hex.EncodeToString(sum[:])), "the image is kept content-addressed beside the logs")
}

// With a context window declared (-context-window, for a model the
// catalog does not know), the context policy is on: once the history
// passes half the window, an earlier read that a later read of the same
// file covers is replaced by a placeholder before the next model call,
// and the CLI says so.
func TestPruningWithContextWindow(t *testing.T) {
	leakcheck.Check(t)
	readA := func(id string) reply {
		return sized(toolCall(0, id, "read", map[string]any{"file_path": "a.txt"}), finish("tool_calls"))
	}
	p := newProvider(t, readA("r1"), readA("r2"), sized(text("done"), finish("stop")))
	ws := workspace(t, map[string]string{"a.txt": strings.Repeat("the quick brown fox jumps over the dog\n", 200)})

	// About 3.2k, 5.5k and 7.7k tokens: only the third request passes
	// 6k, half the window, and pruning the first read brings it back
	// well under the compaction threshold.
	r := runCLI(t, p.env(), "", "-C", ws, "-sessions", t.TempDir(), "-context-window", "12000", "look twice")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "⌁ context: 1 superseded tool result replaced by placeholders")
	assert.NotContains(t, r.stdout, "summarized")
	reqs := p.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, 1, strings.Count(reqs[2].Text(t), "200: the quick brown fox"), "only the later read is sent whole")

	// Without a declared window nothing is pruned ahead of time.
	p2 := newProvider(t, readA("r1"), readA("r2"), sized(text("done"), finish("stop")))
	r = runCLI(t, p2.env(), "", "-C", ws, "-sessions", t.TempDir(), "look twice")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "⌁ context")
	assert.Equal(t, 2, strings.Count(p2.Requests()[2].Text(t), "200: the quick brown fox"), "both reads are sent whole")
}

// Saved outputs older than the retention period are removed when coder
// starts; newer ones stay.
func TestSpillRetention(t *testing.T) {
	leakcheck.Check(t)
	sessions := t.TempDir()
	dir := filepath.Join(sessions, "spill")
	store, err := spill.NewDir(dir, spill.StoreConfig{})
	require.NoError(t, err)
	ctx := context.Background()
	var paths []string
	for _, call := range []string{"old", "new"} {
		st, err := store.Save(ctx, tools.Owner{Session: "s1", Tool: "bash", Call: call}, strings.NewReader("output of "+call))
		require.NoError(t, err)
		paths = append(paths, filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(st.Locator, tools.OutputScheme))))
	}
	old := time.Now().Add(-spillRetention - time.Hour)
	require.NoError(t, os.Chtimes(paths[0], old, old))

	p := newProvider(t, say("ok"))
	r := runCLI(t, p.env(), "", "-C", workspace(t, nil), "-sessions", sessions, "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NoFileExists(t, paths[0])
	assert.FileExists(t, paths[1])
}

// Processes the agent started (a background job, a persistent shell
// with a command still running in it) do not outlive the program.
func TestNoProcessesLeftBehind(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to list child processes")
	}
	leakcheck.Check(t)
	before := childProcesses(t)
	p := newProvider(t,
		call(toolCall(0, "j1", "bash", map[string]any{"command": "sleep 300", "run_in_background": true})),
		call(toolCall(0, "l1", "load_tools", map[string]any{"names": []string{"shell_open", "shell_send"}})),
		call(toolCall(0, "s1", "shell_open", map[string]any{})),
		call(toolCall(0, "s2", "shell_send", map[string]any{"session_id": "sh1", "command": "sleep 300", "wait_ms": 10})),
		say("left running"),
	)
	r := runCLI(t, p.env(), "", "-C", workspace(t, nil), "-sessions", t.TempDir(), "start things")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "still running", r.stdout)
	require.Len(t, p.Requests(), 5)
	assert.NotContains(t, p.Requests()[4].Text(t), "not loaded", "the shell tools ran")
	assert.Equal(t, before, childProcesses(t), "child processes after the run")
}

// childProcesses lists the pids whose parent is this process.
func childProcesses(t *testing.T) []string {
	t.Helper()
	self := strconv.Itoa(os.Getpid())
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == self {
			out = append(out, e.Name())
		}
	}
	return out
}

// In the prompt loop a refused key ends the program (every later turn
// would fail the same way); other failures return to the prompt.
func TestPromptLoopFailures(t *testing.T) {
	leakcheck.Check(t)
	refuse := errorReply(http.StatusUnauthorized, `{"error":{"message":"bad key"}}`)
	p := newProvider(t, refuse)
	r := runCLI(t, p.env(), "one\ntwo\n", "-C", workspace(t, nil), "-sessions", t.TempDir())
	assert.Equal(t, exitFailed, r.code)
	assert.Len(t, p.Requests(), 1)
	assert.Contains(t, r.stderr, "error [auth]")

	invalid := errorReply(http.StatusBadRequest, `{"error":{"message":"unknown parameter"}}`)
	p = newProvider(t, invalid, say("fine now"))
	r = runCLI(t, p.env(), "one\ntwo\n", "-C", workspace(t, nil), "-sessions", t.TempDir())
	assert.Equal(t, exitOK, r.code, "the status of the last turn")
	assert.Len(t, p.Requests(), 2)
	assert.Contains(t, r.stderr, "error [invalid_request]")
	assert.Contains(t, r.stdout, "fine now")
}

// session_search finds an earlier session of the same workspace, not
// one of another workspace, and session_read shows it.
func TestSessionTools(t *testing.T) {
	leakcheck.Check(t)
	sessions := t.TempDir()
	ws, other := workspace(t, nil), workspace(t, nil)
	p := newProvider(t, say("Elsewhere the port is 7731 too."), say("The build listens on port 7731."))
	r := runCLI(t, p.env(), "", "-C", other, "-sessions", sessions, "-json", "which port?")
	require.Equal(t, exitOK, r.code, r.stderr)
	otherID := jsonLines(t, r.stdout)[0]["session_id"].(string)
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-json", "which port?")
	require.Equal(t, exitOK, r.code, r.stderr)
	earlier := jsonLines(t, r.stdout)[0]["session_id"].(string)

	p.add(
		call(toolCall(0, "l1", "load_tools", map[string]any{"names": []string{"session_search", "session_read"}})),
		call(toolCall(0, "q1", "session_search", map[string]any{"query": "7731"})),
		call(toolCall(0, "q2", "session_read", map[string]any{"session_id": earlier})),
		say("It was port 7731."),
	)
	r = runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "what port did we find last time?")
	require.Equal(t, exitOK, r.code, r.stderr)
	reqs := p.Requests()
	require.Len(t, reqs, 6)
	assert.Contains(t, requestTools(t, reqs[3]), "session_search", "loaded")
	found := reqs[4].Text(t)
	assert.Contains(t, found, earlier)
	assert.NotContains(t, found, otherID, "another workspace's session stays out")
	assert.Contains(t, reqs[5].Text(t), "The build listens on port 7731.")
	assert.Contains(t, r.stdout, "It was port 7731.")
}

func TestCardDurationsPattern(t *testing.T) {
	in := "● read_image shot.png  0.7s\n● Edit a.go  +1 -1 · 12.5s\n● x  2m05s\n── cancelled · 1 step · 0.0s\n"
	assert.Equal(t, "● read_image shot.png\n● Edit a.go  +1 -1\n● x\n── cancelled · 1 step · 0.0s\n", cardDurations.ReplaceAllString(in, "$1"))
}

// The collector's target is raised, with a memory limit, unless the
// environment sets either.
func TestTuneGC(t *testing.T) {
	prevPercent, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })

	tuneGC(func(string) string { return "" })
	assert.Equal(t, gcPercent, debug.SetGCPercent(100))
	assert.Equal(t, int64(gcMemoryLimit), debug.SetMemoryLimit(math.MaxInt64))

	tuneGC(func(k string) string { return map[string]string{"GOGC": "50", "GOMEMLIMIT": "64MiB"}[k] })
	assert.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: the runtime's reading of it stands")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "GOMEMLIMIT set: left alone")
}
