package search

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/storekit"
)

// The search benchmark generates a corpus of 1,000 session logs (about
// 500 MB) across several workspaces once per run, then measures, over the
// same files, for a rare and a common literal, a case-insensitive
// regular expression and one with a literal part:
//
//   - harness: JSONL.Search of every workspace with no limit;
//   - ripgrep: rg -c of the same query (skipped when rg is missing);
//   - naive:   decode every line with encoding/json, then search the text;
//   - paired:  harness and ripgrep in turn, the ratio of their best runs;
//   - paired/lines/common: every match of the common literal returned,
//     beside rg printing every matching line;
//   - paired/limit: the same with the search asked as a caller asks it
//     (defaultLimit matches), beside the same rg -c.
//
// Run it with:
//
//	go test -run '^$' -bench BenchmarkSearchCorpus -benchtime 5x ./session/search/

const (
	benchSessions   = 1000
	benchTarget     = 500 << 20 // bytes of logs in all
	benchRare       = "connection reset by peer"
	benchCommon     = "return nil"
	benchRegex      = `connection \w+ by peer`
	benchWorkspaces = 5
)

func BenchmarkSearchCorpus(b *testing.B) {
	dir := b.TempDir()
	start := time.Now()
	total, want := generateCorpus(b, dir)
	b.Logf("corpus: %d sessions, %.1f MB, %d events hold %q; generated in %v",
		benchSessions, float64(total)/(1<<20), want, benchRare, time.Since(start).Round(time.Millisecond))
	store := session.NewJSONL(dir, session.StoreConfig{})
	rates := map[string]float64{}
	measure := func(name string, fn func(b *testing.B) int) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(total)
			n := 0
			for b.Loop() {
				n = fn(b)
			}
			b.ReportMetric(float64(n), "matches")
			rates[name] = float64(total) * float64(b.N) / b.Elapsed().Seconds() / 1e6
		})
	}
	harnessRegex := func(q string, regex bool) func(b *testing.B) int {
		return func(b *testing.B) int {
			ms, err := Search(context.Background(), store, Options{Query: q, Regex: regex, AllWorkspaces: true, Limit: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			return len(ms)
		}
	}
	harness := func(q string) func(b *testing.B) int { return harnessRegex(q, false) }
	rg, rgErr := exec.LookPath("rg")
	ripgrepArgs := func(args ...string) func(b *testing.B) int {
		return func(b *testing.B) int {
			if rgErr != nil {
				b.Skip("ripgrep (rg) is not installed; install it to compare: apt-get install -y ripgrep")
			}
			out, err := exec.Command(rg, append([]string{"-c", "--no-config"}, append(args, dir)...)...).Output()
			if err != nil {
				b.Fatalf("rg: %v", err)
			}
			n := 0
			for line := range strings.Lines(string(out)) {
				_, count, _ := strings.Cut(strings.TrimSpace(line), ":")
				c, _ := strconv.Atoi(count)
				n += c
			}
			return n
		}
	}
	ripgrep := func(q string) func(b *testing.B) int { return ripgrepArgs("-F", "--", q) }
	naive := func(q string) func(b *testing.B) int {
		return func(b *testing.B) int { return naiveSearch(b, dir, q) }
	}

	measure("rare/harness", harness(benchRare))
	measure("rare/ripgrep", ripgrep(benchRare))
	measure("rare/naive", naive(benchRare))
	measure("common/harness", harness(benchCommon))
	measure("common/ripgrep", ripgrep(benchCommon))
	// A case-insensitive regular expression, and one with a literal part.
	measure("fold/harness", harnessRegex("(?i)"+benchRare, true))
	measure("fold/ripgrep", ripgrepArgs("-i", "--", benchRare))
	measure("regex/harness", harnessRegex(benchRegex, true))
	measure("regex/ripgrep", ripgrepArgs("--", benchRegex))
	// The same pairs again, one run of each in turn: on a shared machine
	// the load changes between the runs above, and the ratio of the best
	// interleaved runs is the steadier figure.
	paired := func(name string, ours, theirs func(b *testing.B) int) {
		b.Run("paired/"+name, func(b *testing.B) {
			if rgErr != nil {
				b.Skip("ripgrep (rg) is not installed; install it to compare: apt-get install -y ripgrep")
			}
			bestOurs, bestTheirs := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
			for b.Loop() {
				start := time.Now()
				ours(b)
				bestOurs = min(bestOurs, time.Since(start))
				start = time.Now()
				theirs(b)
				bestTheirs = min(bestTheirs, time.Since(start))
			}
			b.ReportMetric(float64(total)/bestOurs.Seconds()/1e6, "harness-MB/s")
			b.ReportMetric(float64(total)/bestTheirs.Seconds()/1e6, "rg-MB/s")
			b.ReportMetric(bestTheirs.Seconds()/bestOurs.Seconds(), "x-rg")
		})
	}
	paired("rare", harness(benchRare), ripgrep(benchRare))
	paired("common", harness(benchCommon), ripgrep(benchCommon))
	paired("fold", harnessRegex("(?i)"+benchRare, true), ripgrepArgs("-i", "--", benchRare))
	paired("regex", harnessRegex(benchRegex, true), ripgrepArgs("--", benchRegex))
	// Every match of the common literal, returned: beside rg printing
	// every matching line (the work of giving each match back), not only
	// counting them.
	ripgrepLines := func(args ...string) func(b *testing.B) int {
		return func(b *testing.B) int {
			cmd := exec.Command(rg, append([]string{"--no-config", "--no-filename"}, append(args, dir)...)...)
			var lines lineCounter
			cmd.Stdout = &lines
			if err := cmd.Run(); err != nil {
				b.Fatalf("rg: %v", err)
			}
			return int(lines)
		}
	}
	paired("lines/common", harness(benchCommon), ripgrepLines("-F", "--", benchCommon))
	// The same queries as a search is asked them (session_search, a host):
	// every workspace, defaultLimit matches, newest first. The search stops
	// once it has them and cuts snippets for those alone; rg -c still reads
	// every file, so this is the ratio a caller sees, not one of equal work
	// (the pairs above are that).
	limited := func(q string, regex bool) func(b *testing.B) int {
		return func(b *testing.B) int {
			ms, err := Search(context.Background(), store, Options{Query: q, Regex: regex, AllWorkspaces: true})
			if err != nil {
				b.Fatal(err)
			}
			if len(ms) != defaultLimit {
				b.Fatalf("%d matches of %q, want defaultLimit (%d)", len(ms), q, defaultLimit)
			}
			return len(ms)
		}
	}
	paired("limit/rare", limited(benchRare, false), ripgrep(benchRare))
	paired("limit/common", limited(benchCommon, false), ripgrep(benchCommon))
	paired("limit/fold", limited("(?i)"+benchRare, true), ripgrepArgs("-i", "--", benchRare))
	paired("limit/regex", limited(benchRegex, true), ripgrepArgs("--", benchRegex))
	// What a tool call costs: one workspace, the 20 newest matches.
	b.Run("common/harness-workspace-limit20", func(b *testing.B) {
		n := 0
		for b.Loop() {
			ms, err := Search(context.Background(), store, Options{Query: benchCommon, Workspace: "/home/dev/project1", Limit: 20, PerSession: 5})
			if err != nil {
				b.Fatal(err)
			}
			n = len(ms)
		}
		b.ReportMetric(float64(n), "matches")
	})

	// The literal occurs only in text the model saw, at most once per
	// event: every tool must count the same.
	if n := harness(benchRare)(b); n != want {
		b.Errorf("harness found %d events with %q, the corpus has %d", n, benchRare, want)
	}
	if rgErr == nil {
		if n := ripgrep(benchRare)(b); n != want {
			b.Errorf("rg counted %d lines with %q, the corpus has %d", n, benchRare, want)
		}
	}
	for _, q := range []string{"rare", "common", "fold", "regex"} {
		if r, ok := rates[q+"/ripgrep"]; ok && r > 0 {
			b.Logf("%s: harness %.0f MB/s, ripgrep %.0f MB/s: %.2fx ripgrep", q, rates[q+"/harness"], r, rates[q+"/harness"]/r)
		}
	}
	if r := rates["rare/naive"]; r > 0 {
		b.Logf("rare: harness %.0f MB/s, naive decode-then-search %.0f MB/s: %.1fx naive", rates["rare/harness"], r, rates["rare/harness"]/r)
	}
}

// naiveSearch decodes every line of every log and searches the text,
// with as many files at once as the harness search scans.
func naiveSearch(b *testing.B, dir, q string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	var total atomic.Int64
	for _, e := range entries {
		g.Go(func() error {
			f, err := os.Open(filepath.Join(dir, e.Name()))
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<30)
			sc.Scan() // header
			n := 0
			for sc.Scan() {
				var ev session.Event
				if json.Unmarshal(sc.Bytes(), &ev) != nil {
					continue
				}
				eachText(ev, func(t textPiece) bool {
					if strings.Contains(t.text, q) {
						n++
						return false
					}
					return true
				})
			}
			total.Add(int64(n))
			return sc.Err()
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return int(total.Load())
}

// generateCorpus writes the benchmark's logs and returns their total size
// and the number of events holding benchRare.
func generateCorpus(b *testing.B, dir string) (int64, int) {
	return generateCorpusN(b, dir, benchSessions)
}

func generateCorpusN(b testing.TB, dir string, benchSessions int) (int64, int) {
	rng := rand.New(rand.NewPCG(1, 2))
	perSession := benchTarget / 1000
	var total int64
	want := 0
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range benchSessions {
		ws := fmt.Sprintf("/home/dev/project%d", i%benchWorkspaces)
		if i%3 == 0 {
			ws += "/services/api"
		}
		h := session.Header{Format: storekit.FormatVersion, ID: fmt.Sprintf("2026%04d-bench", i), Cwd: ws, Created: base.Add(time.Duration(i) * time.Minute)}
		f, err := os.Create(filepath.Join(dir, h.ID+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		line, _ := json.Marshal(struct {
			Type string `json:"type"`
			session.Header
		}{"session", h})
		w.Write(append(line, '\n'))
		size := int64(len(line) + 1)
		seq := int64(0)
		now := h.Created
		emit := func(p session.Payload) {
			seq++
			now = now.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
			line, err := session.Event{Seq: seq, Time: now, Data: p}.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			w.Write(append(line, '\n'))
			size += int64(len(line) + 1)
		}
		emit(&session.SystemPrompt{Text: "You are a coding agent. Use the tools to read, edit and run code.\nBe terse."})
		for turn := 1; size < int64(perSession); turn++ {
			task := benchTasks[rng.IntN(len(benchTasks))]
			if rng.IntN(200) == 0 {
				task += " — the deploy log says \"" + benchRare + "\""
				want++
			}
			emit(&session.UserMessage{Content: []harness.Block{harness.TextBlock(task)}})
			for step := 1; step <= 1+rng.IntN(6); step++ {
				emit(&session.ModelRequest{Step: step, Model: "deepseek-chat", Fingerprint: session.Fingerprint{System: strings.Repeat("ab", 32), Tools: strings.Repeat("cd", 32), History: strings.Repeat("ef", 32), Messages: 2 * step}})
				file := benchFiles[rng.IntN(len(benchFiles))]
				callID := fmt.Sprintf("call_%d_%d_%d", turn, step, rng.IntN(1e6))
				tool, args := "read", fmt.Sprintf(`{"file_path":%q}`, file)
				if rng.IntN(3) == 0 {
					tool, args = "bash", fmt.Sprintf(`{"command":"go test ./... -run 'Test%s' 2>&1 | tail -n 40"}`, benchIdents[rng.IntN(len(benchIdents))])
				}
				emit(&session.AssistantMessage{Step: step, Model: "deepseek-chat", Finish: "tool_calls", Usage: &harness.Usage{InputTokens: 12000, OutputTokens: 300},
					Content: []harness.Block{
						{Type: harness.BlockReasoning, Text: "The failure points at " + file + "; I should look at the handler and its error path before changing anything."},
						harness.TextBlock("Let me look at `" + file + "`."),
						{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: callID, Name: tool, Arguments: args}},
					}})
				emit(&session.ToolStarted{Step: step, CallID: callID, Name: tool})
				out := benchCode(rng, 2<<10+rng.IntN(14<<10))
				if rng.IntN(200) == 0 {
					out += "\n2026/01/01 10:00:00 dial tcp 10.0.0.7:5432: read: " + benchRare + "\n"
					want++
				}
				emit(&session.ToolFinished{Step: step, CallID: callID, Name: tool, DurationMS: int64(rng.IntN(900)),
					Result: harness.ToolResult{Content: []harness.Block{harness.TextBlock(out)}}})
			}
			emit(&session.AssistantMessage{Step: 7, Model: "deepseek-chat", Finish: "stop", Content: []harness.Block{harness.TextBlock(benchAnswers[rng.IntN(len(benchAnswers))])}})
			emit(&session.TurnEnded{Reason: session.ReasonCompleted, Steps: 7, Usage: harness.Usage{InputTokens: 80000, OutputTokens: 2000}})
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		mod := h.Created.Add(time.Hour)
		os.Chtimes(f.Name(), mod, mod)
		total += size
	}
	return total, want
}

var (
	benchTasks = []string{
		"The integration tests fail on CI with a timeout in TestServerShutdown; find out why.",
		"Add retries with backoff to the HTTP client in internal/fetch, max 3 attempts.",
		"Refactor config loading so env vars override the YAML file.",
		"Why does `go vet` complain about the printf call in logger.go?",
		"Write a table-driven test for ParseDuration covering \"1h30m\", \"-5s\" and garbage.",
		"Rename the package utils to textutil and fix the imports.",
	}
	benchAnswers = []string{
		"Fixed: the shutdown waited on a channel nobody closed. I added `close(done)` in the error path and a test.",
		"Done. Retries now back off 100ms, 200ms, 400ms; non-retryable errors return at once.",
		"The env override is in place; `LoadConfig` reads the file first, then applies `APP_*` variables.",
	}
	benchFiles  = []string{"internal/server/server.go", "internal/fetch/client.go", "cmd/app/main.go", "pkg/config/load.go", "internal/store/sql.go", "README.md"}
	benchIdents = []string{"ServerShutdown", "FetchRetry", "LoadConfig", "ParseDuration", "StoreMigrate", "HandlerAuth"}
	benchLines  = []string{
		"func (s *Server) handle{id}(w http.ResponseWriter, r *http.Request) {",
		"\tif err := s.db.QueryRowContext(ctx, \"SELECT id FROM users WHERE name = $1\", name).Scan(&id); err != nil {",
		"\t\treturn fmt.Errorf(\"query %q: %w\", name, err)",
		"\t}",
		"\tlog.Printf(\"handled %s in %v\\n\", r.URL.Path, time.Since(start))",
		"\treturn nil",
		"}",
		"// {id} reports whether the request carries a valid token.",
		"\tcfg := Config{Addr: \":8080\", Timeout: 30 * time.Second, Path: `C:\\data\\app`}",
		"--- FAIL: Test{id} (0.31s)",
		"    server_test.go:88: got \"ok\", want \"shutting down\"",
		"ok  \tgithub.com/acme/app/internal/fetch\t0.412s",
		"\tfor i, item := range items { // naïve O(n²) loop — fix later",
		"",
	}
)

// benchCode returns about n bytes of code-like tool output.
func benchCode(rng *rand.Rand, n int) string {
	var buf bytes.Buffer
	for lineNo := 1; buf.Len() < n; lineNo++ {
		l := strings.ReplaceAll(benchLines[rng.IntN(len(benchLines))], "{id}", benchIdents[rng.IntN(len(benchIdents))])
		fmt.Fprintf(&buf, "%5d\t%s\n", lineNo, l)
	}
	return buf.String()
}

// lineCounter counts the lines written to it.
type lineCounter int

func (c *lineCounter) Write(p []byte) (int, error) {
	*c += lineCounter(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}
