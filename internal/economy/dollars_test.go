package economy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/internal/longtest"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/sessiontools"
	"github.com/go-harness/harness/tools/toolstest"
)

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// summaryText is the scripted answer to a compaction request: the shape
// the compaction prompt asks for, about 400 words.
var summaryText = "## Goal\nThe session tests fail after a resume; find the cause, fix it, keep every test passing.\n" +
	"## Done\n" + strings.Repeat("- Read the history, pruning and compaction code (session/history.go, session/prune.go, agent/context.go) and the tests around them; ran the tests (long output saved to spill files).\n", 6) +
	"## State\n" + strings.Repeat("- Edited the files named above with small changes marked // checked; the last test run still fails in TestResumeRebuildsHistory.\n", 6) +
	"## Decisions\n- Keep the change minimal; do not touch the log format.\n## Next\n- Re-run the tests, read the failing case, fix the remaining difference."

// summaryReasoning is what the model thinks before it writes a summary.
var summaryReasoning = strings.Repeat("I list what was asked, what was done and what is open, keeping the exact paths. ", 12)

// endpoint answers chat completions from a script, in order, and answers
// compaction requests (wherever they come) with a summary. Every answer
// carries the usage the prefix cache measured for its request, in
// DeepSeek's fields; a request over the cache's window is refused as
// DeepSeek refuses it.
type endpoint struct {
	cache *openaitest.PrefixCache
	// serve holds one request at a time; buf is its body, reused.
	serve     sync.Mutex
	buf       bytes.Buffer
	mu        sync.Mutex
	steps     []turnStep
	next      int
	summaries int
}

// compactionRequest reports whether a request body asks for a summary
// of the conversation: the loop's compaction request, in either of its
// forms (a transcript under the summarizer's system prompt, or the
// conversation itself followed by the summary instruction, which the
// adapter may join to a user message before it). The checks are
// structural: quotes inside a JSON string are escaped, so a file the
// agent read that holds these words cannot match.
func compactionRequest(body []byte) bool {
	if i := bytes.Index(body[:min(len(body), 256)], []byte(`"messages":[`)); i >= 0 &&
		bytes.HasPrefix(body[i:], []byte(`"messages":[{"role":"system","content":"You compress`)) {
		return true
	}
	// The instruction ends the messages, which only the tools and the
	// options follow.
	end := bytes.Index(body, []byte(`a few hundred words at most."}],`))
	return end >= 0 && bytes.Contains(body[max(end-4096, 0):end], []byte(compactionMarker))
}

// compactionMarker starts the loop's summary instruction.
const compactionMarker = "<compaction request>"

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.serve.Lock()
	defer e.serve.Unlock()
	e.buf.Reset()
	e.buf.ReadFrom(r.Body)
	body := e.buf.Bytes()
	use, err := e.cache.Use(body)
	var we *openaitest.WindowError
	if errors.As(err, &we) {
		openaitest.Reply{Status: http.StatusBadRequest, Body: jsonText(map[string]any{"error": map[string]any{
			"message": we.Error(), "type": "invalid_request_error", "code": "invalid_request_error"}})}.ServeHTTP(w, r)
		return
	}
	if err != nil {
		openaitest.Reply{Status: http.StatusBadRequest, Body: jsonText(map[string]any{"error": map[string]any{"message": err.Error()}})}.ServeHTTP(w, r)
		return
	}
	e.mu.Lock()
	var step turnStep
	switch {
	case compactionRequest(body):
		e.summaries++
		step = turnStep{reasoning: summaryReasoning, text: summaryText}
	case e.next < len(e.steps):
		step = e.steps[e.next]
		e.next++
	default:
		e.mu.Unlock()
		openaitest.Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"the script has no more steps"}}`}.ServeHTTP(w, r)
		return
	}
	e.mu.Unlock()
	step.reply(use).ServeHTTP(w, r)
}

// inProcess is an http.RoundTripper that serves requests with a handler.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, r)
	if r.Body != nil {
		r.Body.Close()
	}
	res := rec.Result()
	res.Request = r
	return res, nil
}

// fixedLength returns a directory below dir whose path is 96 bytes long
// (or 8 more than dir's, when that is longer): the model sees absolute
// paths (in placeholders, in tool output), and temporary directories'
// names vary in length from run to run, which would change the token
// counts.
func fixedLength(dir string) string {
	pad := max(96-len(dir)-2, 7)
	return filepath.Join(dir, "w"+strings.Repeat("x", pad))
}

// corpusSet is the corpus and a workspace holding it, which each run's
// workspace links to.
type corpusSet struct {
	files  []corpusFile
	master string
}

func newCorpusSet(t testing.TB) *corpusSet {
	c := &corpusSet{files: corpus(t), master: filepath.Join(t.TempDir(), "corpus")}
	writeWorkspace(t, c.master, c.files)
	return c
}

// configuration is one way of running a session.
type configuration struct {
	name string
	// policy is the context policy; naive runs without spill and guards
	// as well, sending every output whole.
	policy agent.ContextPolicy
	naive  bool
	// fitWindow says the endpoint refuses requests over the window, as
	// DeepSeek does; without it a configuration that outgrows the
	// window is priced as if it fitted, and marked.
	fitWindow bool
}

var (
	costAware  = configuration{name: "default (cost-aware)", fitWindow: true}
	off        = configuration{name: "pruning and compaction off", policy: agent.ContextPolicy{Strategy: agent.ContextOff}}
	thresholds = configuration{name: "thresholds 0.5/0.8/0.25", policy: agent.ContextPolicy{Strategy: agent.ContextThresholds}, fitWindow: true}
	naive      = configuration{name: "naive loop (whole history)", policy: agent.ContextPolicy{Strategy: agent.ContextOff}, naive: true}
)

// dollarOutcome is what one run of a session cost.
type dollarOutcome struct {
	requests    int
	usage       harness.Usage // the turn's, sub-agents and summaries included
	child       harness.Usage // the sub-agents' part of it
	peak        int64         // largest prompt, in tokens
	refused     int           // requests over the window the endpoint refused
	dollars     float64
	prunings    int // pruned results
	compactions int
	summaries   int
}

func (o dollarOutcome) hitShare() float64 {
	if o.usage.InputTokens == 0 {
		return 0
	}
	return float64(o.usage.CacheHitTokens) / float64(o.usage.InputTokens)
}

// peakHour is when every run is priced: a weekday's peak hour, so the
// figures do not depend on when the test runs.
var peakHour = time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC)

// explorePrompt is the explore agent's system prompt, as the coder's.
const explorePrompt = "You are explore, a read-only research agent working for another coding agent. You cannot change files or run commands: read, glob and grep are your tools.\n\nAnswer the task you are given and nothing more. Search broadly first (glob, grep), then read only the parts that matter. Your final message is all the other agent sees: make it a short report with the file paths and line numbers it needs, the facts found, and what you could not find. Do not paste whole files."

// systemPrompt is the parent's system prompt, about the size of the
// coder's.
const systemPrompt = "You are coder, a careful coding agent working for the user in the workspace on linux.\n\nWork in small, checked steps:\n- Read a file before you change it. Use edit for changes to existing files and write for new files; keep changes minimal and in the style of the surrounding code.\n- Run the tests with run_tests. Search with glob and grep.\n- Large outputs are saved whole; when a result says so, page through it with read using offset and limit instead of running the command again.\n- When a reminder says you are repeating yourself or failing, stop and change your approach.\n- Verify your work before you say it is done.\n\nAnswer briefly: what you changed, how you checked it, and anything the user must decide."

// runDollars runs a scripted session against the emulated DeepSeek
// endpoint with the model id modelName and a context window of window
// tokens, and returns what it cost. It checks that nothing was lost:
// every spilled output is whole in its spill file, every pruned result's
// original is in the log, and the log rebuilds the history the model
// was last sent.
func runDollars(t testing.TB, c *corpusSet, sc scriptedSession, modelName string, window int, cfg configuration) dollarOutcome {
	t.Helper()
	ctx := context.Background()
	workspace := fixedLength(t.TempDir())
	linkWorkspace(t, workspace, c.master, c.files)
	fsys, err := fslocal.New(workspace)
	require.NoError(t, err)
	defer fsys.Close()

	cache := &openaitest.PrefixCache{}
	if cfg.fitWindow {
		cache.Window = window
	}
	ep := &endpoint{cache: cache, steps: sc.steps}
	// The endpoint answers in process: the adapter's HTTP client hands
	// each request to the handler, without a socket.
	client := &http.Client{Transport: inProcess{ep}}
	llm, err := openai.New(openai.Config{BaseURL: "http://deepseek.test", APIKey: "test-key", Model: modelName, ContextWindow: window,
		Dialect: openai.DialectDeepSeek, HTTPClient: client})
	require.NoError(t, err)

	store := session.NewMemory(session.StoreConfig{})
	spillStore, err := spill.NewMemory(spill.StoreConfig{})
	require.NoError(t, err)
	toolset := append(files.Tools(files.Config{}), codesearch.Tools(codesearch.Config{})...)
	toolset = append(toolset, runTestsTool(sc.testRuns))
	opts := []agent.Option{
		agent.WithModel(llm),
		agent.WithStores(agent.Stores{Files: fsys, Sessions: store}),
		agent.WithTools(toolset...),
		agent.WithSystemPrompt(systemPrompt),
		agent.WithPrices(pricing.DeepSeek()),
		agent.WithContextPolicy(cfg.policy),
		agent.WithLimits(agent.Limits{MaxSteps: 400}),
	}
	if !cfg.naive {
		spilling, err1 := spill.Middleware(spill.Config{})
		deadlines, err2 := guard.Deadlines(guard.DeadlineConfig{})
		repeats, err3 := guard.RepeatGuard(guard.RepeatConfig{})
		failures, err4 := guard.FailureGuard(guard.FailureConfig{})
		require.NoError(t, errors.Join(err1, err2, err3, err4))
		opts = append(opts,
			agent.WithStores(agent.Stores{Output: spillStore}),
			agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{spilling, deadlines}, Steps: []tools.StepObserver{repeats, failures}}))
	}
	if sc.childSteps > 0 {
		opts = append(opts, agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{
			Name: "explore", Description: "A read-only researcher (read, glob, grep): finds where things are across many files and reports back in a few lines.",
			System: explorePrompt, Tools: []string{"read", "glob", "grep"}, MaxSteps: 60, // as the coder's
		}}}))
	}
	loop, err := agent.New(opts...)
	require.NoError(t, err)
	defer loop.Close()
	s, err := loop.NewSession(ctx, session.Header{Cwd: workspace})
	require.NoError(t, err)
	var end *agent.TurnEnd
	var children []string
	var childUsage harness.Usage
	for ev, err := range s.Run(ctx, sc.prompt) {
		require.NoError(t, err)
		switch e := ev.(type) {
		case *agent.TurnEnd:
			end = e
		case *agent.SubAgentEvent:
			switch ce := e.Event.(type) {
			case *agent.TurnEnd:
				children = append(children, e.Session)
			case *agent.ModelUsage:
				childUsage.Add(ce.Usage)
			}
		}
	}
	require.NotNil(t, end)
	require.Equal(t, session.ReasonCompleted, end.Reason, "%s, %s: %v", sc.name, cfg.name, end.Err)
	require.Equal(t, sc.parentSteps, end.Steps, "%s, %s: the parent ran its script", sc.name, cfg.name)
	assert.Equal(t, len(sc.steps), ep.next, "every scripted step was asked for")

	st := cache.Stats()
	o := dollarOutcome{requests: st.Requests, usage: end.Usage, child: childUsage, peak: st.PeakTokens, refused: st.Refused, summaries: ep.summaries}
	assert.Equal(t, st.PromptTokens, end.Usage.InputTokens, "the turn's usage counts every prompt the endpoint measured")
	assert.Equal(t, st.HitTokens, end.Usage.CacheHitTokens)
	dollars, ok := pricing.DeepSeek().Cost(modelName, end.Usage, peakHour)
	require.True(t, ok)
	o.dollars = dollars

	// Nothing is lost: every spilled output is whole in its spill file,
	// and every pruned result's original is in the log, where the model
	// can read it again with session_read.
	reader := toolstest.NewEnv()
	defer reader.Close()
	reader.Env.Cwd = workspace
	sessionRead := sessiontools.Tools(store, sessiontools.Config{})[1]
	sessions := append([]string{s.Header().ID}, children...)
	runs := 0
	for _, id := range sessions {
		tr, err := store.Load(ctx, id)
		require.NoError(t, err)
		results := map[int64]*session.ToolFinished{}
		for _, e := range tr.Events {
			switch p := e.Data.(type) {
			case *session.ToolFinished:
				results[e.Seq] = p
				if p.Name != "run_tests" {
					continue
				}
				runs++
				want := testOutput(runs, runs == sc.testRuns)
				text := p.Result.Text()
				i := strings.Index(text, tools.OutputScheme)
				if cfg.naive || i < 0 {
					require.Equal(t, want, text, "an output short enough, or never spilled, is whole in the history")
					continue
				}
				loc := text[i:]
				loc = loc[:strings.IndexAny(loc, " \"\n")]
				loc = strings.TrimSuffix(loc, ".")
				rc, err := spillStore.Open(ctx, loc)
				require.NoError(t, err, loc)
				whole, err := io.ReadAll(rc)
				rc.Close()
				require.NoError(t, err)
				require.Equal(t, want, string(whole), "the spill file %s holds the whole output", loc)
			case *session.Pruned:
				for _, c := range p.Calls {
					o.prunings++
					orig, ok := results[c.Seq]
					require.True(t, ok, "the pruned result %s (seq %d) is in the log", c.CallID, c.Seq)
					text := orig.Result.Text()
					// The original, not its placeholder (the file read may itself
					// contain the placeholder's words, as session/prune.go does).
					require.NotEqual(t, c.Placeholder, text, "the log keeps the original of %s", c.CallID)
					require.False(t, strings.HasPrefix(strings.TrimSpace(text), "[pruned:"), "the log keeps the original of %s", c.CallID)
					lines := strings.Split(strings.TrimSpace(text), "\n")
					back, err := reader.Call(ctx, sessionRead, map[string]any{"session_id": id, "seq": c.Seq, "before": 0, "after": 0})
					require.NoError(t, err)
					require.False(t, back.IsError, back.Text())
					for _, l := range []string{lines[0], lines[len(lines)/2], lines[len(lines)-1]} {
						require.Contains(t, back.Text(), strings.TrimSpace(l), "session_read gives back the pruned %s", c.CallID)
					}
				}
			case *session.Compacted:
				o.compactions++
			}
		}
	}
	return o
}

func (o dollarOutcome) String() string {
	return fmt.Sprintf("%d requests, %s tokens in (%.1f%% cached), %s out, peak %s, $%.4f", o.requests,
		mtok(o.usage.InputTokens), 100*o.hitShare(), mtok(o.usage.OutputTokens), mtok(o.peak), o.dollars)
}

func mtok(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// row is one line of the dollar table.
type row struct {
	session, model string
	window         int
	cfg            configuration
	o              dollarOutcome
}

func (r row) fits() bool { return r.o.peak <= int64(r.window) }

func (r row) String() string {
	fit := ""
	if !r.fits() {
		fit = " (over the window)"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %.1f%% | $%.4f | %d / %d |%s", r.session, r.model, mtok(int64(r.window)), r.cfg.name,
		mtok(r.o.usage.InputTokens), 100*r.o.hitShare(), r.o.dollars, r.o.prunings, r.o.compactions, fit)
}

// TestDollars runs the scripted sessions at DeepSeek's prices, at a 128k
// and a 1M window, under the default cost-aware policy, with pruning and
// compaction off, with today's thresholds and as a naive loop, and
// checks the targets: the default costs no more than the
// cheapest of the others (pruning and compaction off only where it fits
// the window), at most 0.6 of the naive loop on the long bug fix, and
// the exploration costs less through the explore sub-agent than in the
// parent. The table goes to the test log (go test -v -run TestDollars).
func TestDollars(t *testing.T) {
	if testing.Short() {
		t.Skip("the dollar table runs long scripted sessions")
	}
	c := newCorpusSet(t)
	files := c.files
	sessions := []scriptedSession{bugFix(files, 150), explorationSession(files, 80, false), explorationSession(files, 80, true)}
	models := longtest.Pick([]string{"deepseek-flash"}, []string{"deepseek-flash", "deepseek-v4-pro"})
	windows := []int{128_000, 1_000_000}
	var rows []row
	byKey := map[string]row{}
	key := func(session, model string, window int, cfg string) string {
		return fmt.Sprint(session, "|", model, "|", window, "|", cfg)
	}
	for _, m := range models {
		for _, sc := range sessions {
			// Without pruning and compaction the window changes nothing:
			// those two run once and are compared at both windows.
			offRun := runDollars(t, c, sc, m, windows[len(windows)-1], off)
			naiveRun := runDollars(t, c, sc, m, windows[len(windows)-1], naive)
			for _, w := range windows {
				for _, r := range []row{
					{sc.name, m, w, costAware, runDollars(t, c, sc, m, w, costAware)},
					{sc.name, m, w, thresholds, runDollars(t, c, sc, m, w, thresholds)},
					{sc.name, m, w, off, offRun},
					{sc.name, m, w, naive, naiveRun},
				} {
					rows = append(rows, r)
					byKey[key(sc.name, m, w, r.cfg.name)] = r
				}
			}
		}
	}
	t.Log("| session | model | window | configuration | tokens in | cached | dollars | pruned / compactions |")
	t.Log("|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		t.Log(r.String())
	}
	for _, r := range rows {
		if r.cfg.name != costAware.name {
			continue
		}
		assert.True(t, r.fits(), "%s: the default keeps every request inside the window", r)
		assert.Zero(t, r.o.refused, "%s: the default never sends a request the window refuses", r)
		get := func(cfg configuration) row { return byKey[key(r.session, r.model, r.window, cfg.name)] }
		cheapest := get(naive)
		for _, other := range []row{get(thresholds), get(off)} {
			if other.fits() && other.o.dollars < cheapest.o.dollars {
				cheapest = other
			}
		}
		assert.LessOrEqual(t, r.o.dollars, cheapest.o.dollars*(1+1e-9), "%s costs more than %s", r, cheapest)
		if strings.HasPrefix(r.session, "bug fix") {
			assert.LessOrEqual(t, r.o.dollars, 0.6*get(naive).o.dollars, "%s: at most 0.6 of the naive loop's %s", r, get(naive))
		}
	}
	for _, m := range models {
		for _, w := range windows {
			for _, cfg := range []configuration{costAware, thresholds, off} {
				alone := byKey[key(sessions[1].name, m, w, cfg.name)]
				sub := byKey[key(sessions[2].name, m, w, cfg.name)]
				child, _ := pricing.DeepSeek().Cost(m, sub.o.child, peakHour)
				t.Logf("%s at %s, %s: the exploration costs $%.4f in the parent and $%.4f through the sub-agent (%.0f%%; the sub-agent's own calls $%.4f)", m, mtok(int64(w)), cfg.name,
					alone.o.dollars, sub.o.dollars, 100*sub.o.dollars/alone.o.dollars, child)
				if cfg.name == costAware.name {
					assert.Less(t, sub.o.dollars, alone.o.dollars, "%s at %d: the sub-agent exploration costs less than the same exploration in the parent", m, w)
				}
			}
		}
	}
}
