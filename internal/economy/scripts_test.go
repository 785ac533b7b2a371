package economy_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/tools"
)

// The scripted sessions of the dollar benchmark work on a corpus of this
// module's own Go source files, copied into a fresh workspace for each
// run, with the tools a coding agent has (read, write, edit, glob, grep)
// and a test runner whose output is long. The model is a scriptedSession: each
// step is the reasoning, text and tool calls a real model might send,
// streamed in DeepSeek's wire format, so the real adapter, the real
// tools and the real loop run, and only the model's choices are fixed.

// corpusFile is one source file of the workspace.
type corpusFile struct {
	path string // slash-separated, relative to the workspace
	text string
}

// corpus returns this module's non-test Go files of 2 to 48 KiB below
// some of the library's packages, sorted by path: real code, read the
// way an agent reads it.
func corpus(t testing.TB) []corpusFile {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the benchmark runs in the module's internal/economy directory")
	var out []corpusFile
	for _, dir := range []string{"agent", "guard", "session", "spill", "tools"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if len(b) < 2<<10 || len(b) > 48<<10 {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			out = append(out, corpusFile{path: filepath.ToSlash(rel), text: string(b)})
			return nil
		})
		require.NoError(t, err)
	}
	slices.SortFunc(out, func(a, b corpusFile) int { return strings.Compare(a.path, b.path) })
	require.Greater(t, len(out), 60, "the corpus has enough files")
	return out
}

// fixedTime is the modification time every workspace file starts with, so
// that listings ordered by time come out the same in every run.
var fixedTime = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// writeWorkspace copies the corpus into dir.
func writeWorkspace(t testing.TB, dir string, files []corpusFile) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(f.text), 0o644))
		require.NoError(t, os.Chtimes(p, fixedTime, fixedTime))
	}
}

// linkWorkspace fills dir with hard links to the files of master, a
// workspace writeWorkspace wrote: the file tools replace a file they
// change (a new file renamed over the old), so the links are never
// written through.
func linkWorkspace(t testing.TB, dir, master string, files []corpusFile) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Link(filepath.Join(master, filepath.FromSlash(f.path)), p))
	}
}

// turnStep is one scripted model answer.
type turnStep struct {
	reasoning string
	text      string
	calls     []harness.ToolCall
}

// scriptedSession is a scripted session: its prompt, its steps in the order the
// endpoint is asked for them (a sub-agent's steps come between the
// parent's task call and the parent's next step), and how many of them
// are the parent's.
type scriptedSession struct {
	name   string
	prompt string
	steps  []turnStep
	// parentSteps and childSteps split the steps; childSteps is 0 for a
	// session without a sub-agent.
	parentSteps, childSteps int
	// testRuns is how many run_tests calls the session makes.
	testRuns int
}

// reply turns a step into the chunks DeepSeek streams, ending with the
// usage: the prompt's as the cache measured it, and the answer's tokens
// at four bytes a token (the cache's estimate), reasoning included.
func (s turnStep) reply(use openaitest.CacheUse) openaitest.Reply {
	var chunks []openaitest.Chunk
	out, reasoning := len(s.text), len(s.reasoning)
	for _, c := range s.calls {
		out += len(c.Name) + len(c.Arguments)
	}
	if s.reasoning != "" {
		chunks = append(chunks, openaitest.Chunk{Reasoning: s.reasoning})
	}
	if s.text != "" {
		chunks = append(chunks, openaitest.Chunk{Text: s.text})
	}
	for i, c := range s.calls {
		chunks = append(chunks, openaitest.Chunk{ToolCall: &model.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}})
	}
	finish := "stop"
	if len(s.calls) > 0 {
		finish = "tool_calls"
	}
	tokens := func(n int) int64 { return int64((n + 3) / 4) }
	return openaitest.Reply{Chunks: append(chunks, openaitest.Chunk{Finish: finish}, openaitest.Chunk{Usage: &harness.Usage{
		InputTokens: use.PromptTokens, CacheHitTokens: use.HitTokens, CacheMissTokens: use.MissTokens,
		OutputTokens: tokens(out + reasoning), ReasoningTokens: tokens(reasoning),
	}})}
}

// builder writes a scriptedSession, tracking the workspace's files as the
// scriptedSession's edits change them.
type builder struct {
	rng    *rand.Rand
	files  map[string]string
	paths  []string
	steps  []turnStep
	ids    int
	edits  int
	tests  int
	prefix string // of call ids: the parent's and a child's differ
}

func newBuilder(files []corpusFile, seed uint64) *builder {
	b := &builder{rng: rand.New(rand.NewPCG(seed, 29)), files: map[string]string{}, prefix: "call_"}
	for _, f := range files {
		b.files[f.path] = f.text
		b.paths = append(b.paths, f.path)
	}
	return b
}

// thoughts are the pieces the scripted reasoning is made of.
var thoughts = []string{
	"The failure points at the way the history is rebuilt after a resume, so I need to see where the messages are derived.",
	"This function takes the lock before it appends; the caller must not hold it already or the step deadlocks.",
	"I should check every caller before changing the signature, so a grep for the name comes first.",
	"The test output is long; the failing case is at the end, and the rest passed, so only one path is wrong.",
	"The edit went in cleanly. Reading the file again shows the whole function as it is now, which I need for the next change.",
	"This file only wires options together; the logic I am after lives one package down.",
	"The error says the version is stale, which means the file changed after I read it: read it again before editing.",
	"Two of these helpers do the same thing with different names; keep the change minimal and touch only the one in the failing path.",
	"Let me confirm the behaviour against the tests before going further.",
	"The comment above the type explains the invariant: the slice is never changed in place, only replaced.",
}

func (b *builder) reasoning() string {
	n := 1 + b.rng.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = thoughts[b.rng.IntN(len(thoughts))]
	}
	return strings.Join(parts, " ")
}

func (b *builder) call(name string, args map[string]any) harness.ToolCall {
	b.ids++
	return harness.ToolCall{ID: fmt.Sprintf("%s%03d", b.prefix, b.ids), Name: name, Arguments: jsonText(args)}
}

// step adds a step with the calls given.
func (b *builder) step(text string, calls ...harness.ToolCall) {
	b.steps = append(b.steps, turnStep{reasoning: b.reasoning(), text: text, calls: calls})
}

func (b *builder) answer(text string) {
	b.steps = append(b.steps, turnStep{reasoning: b.reasoning(), text: text})
}

func (b *builder) read(path string) harness.ToolCall {
	return b.call("read", map[string]any{"file_path": path})
}

func (b *builder) readWindow(path string, offset, limit int) harness.ToolCall {
	return b.call("read", map[string]any{"file_path": path, "offset": offset, "limit": limit})
}

func (b *builder) grep(pattern string) harness.ToolCall {
	return b.call("grep", map[string]any{"pattern": pattern, "output_mode": "content", "head_limit": 60})
}

func (b *builder) grepFiles(pattern string) harness.ToolCall {
	return b.call("grep", map[string]any{"pattern": pattern})
}

func (b *builder) glob(pattern string) harness.ToolCall {
	return b.call("glob", map[string]any{"pattern": pattern})
}

func (b *builder) runTests(pkg string) harness.ToolCall {
	b.tests++
	return b.call("run_tests", map[string]any{"package": pkg})
}

// edit changes one line of path that occurs once in it, as a real fix
// would, and tracks the new content.
func (b *builder) edit(path string) harness.ToolCall {
	text := b.files[path]
	lines := strings.Split(text, "\n")
	start := b.rng.IntN(len(lines))
	for i := range lines {
		l := lines[(start+i)%len(lines)]
		if len(strings.TrimSpace(l)) < 24 || strings.Count(text, l) != 1 || strings.HasSuffix(l, "// checked") {
			continue
		}
		b.edits++
		repl := l + " // checked"
		b.files[path] = strings.Replace(text, l, repl, 1)
		return b.call("edit", map[string]any{"file_path": path, "old_string": l, "new_string": repl})
	}
	panic("no line to edit in " + path)
}

// identifier returns a name declared in path, for greps.
func (b *builder) identifier(path string) string {
	var names []string
	for _, l := range strings.Split(b.files[path], "\n") {
		if rest, ok := strings.CutPrefix(l, "func "); ok {
			if strings.HasPrefix(rest, "(") {
				if i := strings.Index(rest, ") "); i > 0 {
					rest = rest[i+2:]
				}
			}
			if i := strings.IndexAny(rest, "[("); i > 2 {
				names = append(names, rest[:i])
			}
		}
	}
	if len(names) == 0 {
		return "func"
	}
	return names[b.rng.IntN(len(names))]
}

func lineCount(s string) int { return strings.Count(s, "\n") + 1 }

// bugFix is the long bug-fix session: 150 steps over the corpus, with a
// handful of files edited again and again, each edit followed by a
// re-read, test runs with long output, greps, and reads of files around
// the fix, some of them read twice.
func bugFix(files []corpusFile, steps int) scriptedSession {
	b := newBuilder(files, 150)
	// The files the fix touches, and the ones read for context.
	var focus, context []string
	for i, p := range b.paths {
		n := len(b.files[p])
		switch {
		case len(focus) < 5 && n > 10<<10 && n < 30<<10 && i%7 == 3:
			focus = append(focus, p)
		case i%3 == 1:
			context = append(context, p)
		}
	}
	b.step("Let me find where the failing behaviour lives.", b.grep("func \\(h \\*History\\)"))
	b.step("", b.glob("session/*.go"))
	for _, f := range focus {
		b.step("", b.read(f))
	}
	b.step("Now the tests, to see the failure.", b.runTests("./..."))
	b.step("", b.grep(b.identifier(focus[0])))
	ctxNext, readCtx := 0, []string{}
	for len(b.steps) < steps-6 {
		f := focus[b.rng.IntN(len(focus))]
		switch r := b.rng.IntN(20); {
		case r < 4: // read a file around the fix
			c := context[ctxNext%len(context)]
			ctxNext++
			readCtx = append(readCtx, c)
			b.step("", b.read(c))
		case r < 5 && len(readCtx) > 1: // two at once
			c1, c2 := context[ctxNext%len(context)], context[(ctxNext+1)%len(context)]
			ctxNext += 2
			readCtx = append(readCtx, c1, c2)
			b.step("Two more files to compare.", b.read(c1), b.read(c2))
		case r < 7 && len(readCtx) > 0: // read one again: unchanged, superseded
			b.step("", b.read(readCtx[b.rng.IntN(len(readCtx))]))
		case r < 9: // a window of a focus file
			n := lineCount(b.files[f])
			off := 1 + b.rng.IntN(max(n-80, 1))
			b.step("", b.readWindow(f, off, 80))
		case r < 13: // fix something, then look at the result
			b.step("I will make the change.", b.edit(f))
			b.step("", b.read(f))
		case r < 16:
			b.step("", b.grep(b.identifier(f)))
		default:
			b.step("Run the tests again.", b.runTests("./..."))
		}
	}
	b.step("Final check of the changed files and the tests.", b.runTests("./..."))
	for _, f := range focus[:min(len(focus), steps-len(b.steps)-1)] {
		b.step("", b.read(f))
	}
	for len(b.steps) < steps-1 {
		b.step("", b.grep(b.identifier(focus[0])))
	}
	b.answer("Fixed: the history is rebuilt the same way after a resume. I changed the files listed above and the tests pass.")
	return scriptedSession{name: fmt.Sprintf("bug fix (%d steps)", steps), prompt: "The session tests fail after a resume: find the cause, fix it and make the tests pass.",
		steps: b.steps, parentSteps: len(b.steps), testRuns: b.tests}
}

// exploreReport is what the exploration finds out, as the explore agent
// reports it and as the parent states it when it explored itself.
const exploreReport = "Report: tool results are pruned in session/prune.go (Superseded, applyPruned), decided in agent/context.go (relieve), logged as session.Pruned events; compaction splits in internal/compact (Split) and summarizes in agent/context.go (compact, summarize). Spilled output is saved by spill/middleware.go and read back through the read tool's spill:// paths. The placeholders name the superseding call; the log keeps every original."

// exploration is the exploration session: a few steps of the parent's
// own work, then a broad exploration (in the parent, or handed to an
// explore sub-agent with one task call), then a few steps that use what
// it found. In the parent it is steps steps long.
func explorationSession(files []corpusFile, steps int, sub bool) scriptedSession {
	const before, after = 10, 11
	b := newBuilder(files, 80)
	var work []string
	for i, p := range b.paths {
		if n := len(b.files[p]); len(work) < 3 && n > 6<<10 && n < 24<<10 && i%11 == 5 {
			work = append(work, p)
		}
	}
	b.step("First the files I was asked about.", b.read(work[0]))
	b.step("", b.read(work[1]))
	b.step("", b.read(work[2]))
	b.step("", b.grep(b.identifier(work[0])))
	b.step("", b.runTests("./..."))
	for len(b.steps) < before {
		b.step("", b.readWindow(work[len(b.steps)%3], 1, 120))
	}
	parentBefore := b.steps
	// The exploration: searches, then reads across many files, some read
	// twice, some in windows.
	e := newBuilder(files, 81)
	if sub {
		e.prefix = "explore_"
	}
	n := steps - before - after
	var seen []string
	for i := 0; len(e.steps) < n; i++ {
		p := e.paths[(i*7)%len(e.paths)]
		switch i % 6 {
		case 0:
			e.step("", e.grepFiles(e.identifier(p)))
		case 1:
			e.step("", e.glob(filepath.ToSlash(filepath.Dir(p))+"/*.go"))
		case 2, 3:
			seen = append(seen, p)
			e.step("", e.read(p))
		case 4:
			if len(seen) > 2 {
				e.step("", e.read(seen[len(seen)-3]))
			} else {
				e.step("", e.read(p))
			}
		case 5:
			e.step("", e.readWindow(p, 1+lineCount(e.files[p])/2, 100))
		}
	}
	var out []turnStep
	out = append(out, parentBefore...)
	childSteps := 0
	if sub {
		b.steps = nil
		b.step("This needs a broad search; I will hand it to the explore agent.",
			b.call("task", map[string]any{"agent": "explore", "description": "find pruning and spill code",
				"prompt": "Find where tool results are pruned, compacted and spilled in this module, and how a pruned result can be read again. Report the files, functions and how they connect."}))
		out = append(out, b.steps...)
		e.answer(exploreReport)
		out = append(out, e.steps...)
		childSteps = len(e.steps)
	} else {
		out = append(out, e.steps...)
	}
	b.steps = nil
	b.ids += 100
	b.step("With that, the change is small.", b.edit(work[0]))
	b.step("", b.read(work[0]))
	b.step("", b.edit(work[1]))
	b.step("", b.read(work[1]))
	b.step("", b.runTests("./..."))
	for len(b.steps) < after-1 {
		b.step("", b.grep(b.identifier(work[1])))
	}
	text := "Done. " + exploreReport
	b.answer(text)
	out = append(out, b.steps...)
	name := fmt.Sprintf("exploration (%d steps)", steps)
	if sub {
		name = fmt.Sprintf("exploration (%d steps) by the explore sub-agent", steps)
	}
	return scriptedSession{name: name, prompt: "Tidy how pruned results are described, after finding out how pruning, compaction and spill fit together.",
		steps: out, parentSteps: len(out) - childSteps, childSteps: childSteps, testRuns: b.tests}
}

// testOutput is what one run of the test runner prints: long verbose
// output of real-looking tests, failing until the last run.
func testOutput(run int, last bool) string {
	var b strings.Builder
	n := 300 + (run*137)%700
	for i := range n {
		name := fmt.Sprintf("Test%s%03d", []string{"History", "Prune", "Compact", "Spill", "Resume", "Loop"}[i%6], i)
		fmt.Fprintf(&b, "=== RUN   %s\n", name)
		if i%5 == 0 {
			fmt.Fprintf(&b, "    %s_test.go:%d: checked %d events in %d steps\n", strings.ToLower(name[4:8]), 40+i%300, i*3, i%17)
		}
		fmt.Fprintf(&b, "--- PASS: %s (0.%02ds)\n", name, i%100)
	}
	if last {
		b.WriteString("PASS\nok  \tgithub.com/go-harness/harness/session\t1.204s\n")
	} else {
		fmt.Fprintf(&b, "--- FAIL: TestResumeRebuildsHistory (0.02s)\n    resume_test.go:%d: the rebuilt history differs at message %d\nFAIL\nFAIL\tgithub.com/go-harness/harness/session\t1.311s\n", 80+run, 12+run%9)
	}
	return b.String()
}

// runTestsTool stands for a host's test runner: no output cap of its own.
func runTestsTool(total int) tools.Tool {
	n := 0
	return tools.Define(tools.Spec{Name: "run_tests", Description: "Run the Go tests of a package pattern and return their verbose output.", Family: tools.FamilyProcess},
		func(ctx context.Context, call *tools.Call, in runIn) (*harness.ToolResult, error) {
			n++
			return harness.TextResult(testOutput(n, n == total)), nil
		})
}
