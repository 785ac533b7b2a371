package session_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/longtest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/search"
	"github.com/go-harness/harness/tools"
)

// The kill test re-executes the test binary as a writer process (see
// TestMain): it runs turns of the real agent loop on a JSONL store, with
// a scripted model and tools, and after every Append returns it reports
// the numbers and types of the events written on file descriptor 3. The
// parent kills it with SIGKILL at a random point and checks the log.

const (
	killHelperEnv = "HARNESS_SESSION_KILL_HELPER" // the store directory
	killIDEnv     = "HARNESS_SESSION_KILL_ID"
	killSeedEnv   = "HARNESS_SESSION_KILL_SEED"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(killHelperEnv); dir != "" {
		os.Exit(killWriterMain(dir, os.Getenv(killIDEnv), os.Getenv(killSeedEnv)))
	}
	os.Exit(m.Run())
}

// reportingStore reports every event after its Append returned.
type reportingStore struct {
	session.Store
	w  *os.File
	mu *sync.Mutex
}

func (s reportingStore) Create(ctx context.Context, h session.Header) (session.Log, error) {
	l, err := s.Store.Create(ctx, h)
	if err != nil {
		return nil, err
	}
	return reportingLog{Log: l, s: s}, nil
}

func (s reportingStore) Open(ctx context.Context, id string) (session.Log, *session.Transcript, error) {
	l, t, err := s.Store.Open(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return reportingLog{Log: l, s: s}, t, nil
}

type reportingLog struct {
	session.Log
	s reportingStore
}

func (l reportingLog) Append(ctx context.Context, ps ...session.Payload) ([]session.Event, error) {
	for _, p := range ps {
		// Announce a large write, so the parent can aim a kill at it.
		// Encoding such a payload takes a while before the write starts:
		// encode it once here and announce how long that took.
		if f, ok := p.(*session.ToolFinished); ok && len(f.Result.Text()) >= 192<<10 {
			// The first encoding warms up memory, the second is timed.
			_, _ = session.Event{Seq: 1, Data: p}.MarshalJSON()
			t0 := time.Now()
			_, _ = session.Event{Seq: 1, Data: p}.MarshalJSON()
			l.s.mu.Lock()
			_, _ = fmt.Fprintf(l.s.w, "writing big %d\n", time.Since(t0).Microseconds())
			l.s.mu.Unlock()
			break
		}
	}
	evs, err := l.Log.Append(ctx, ps...)
	if err != nil {
		return evs, err
	}
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%d %s\n", e.Seq, e.Type())
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if _, werr := l.s.w.WriteString(b.String()); werr != nil {
		os.Exit(3) // the parent is gone
	}
	return evs, nil
}

type workIn struct {
	Size  int `json:"size" jsonschema:"bytes of output"`
	Sleep int `json:"sleep,omitempty" jsonschema:"microseconds to wait"`
}

// killTools are a concurrency-safe tool and a side-effecting barrier
// tool, both returning output of the requested size.
func killTools() []tools.Tool {
	run := func(ctx context.Context, call *tools.Call, in workIn) (*harness.ToolResult, error) {
		if in.Sleep > 0 {
			time.Sleep(time.Duration(in.Sleep) * time.Microsecond)
		}
		line := fmt.Sprintf("%s output \"quoted\" \\ tab\t ünï ✓ line\n", call.ID)
		return harness.TextResult(strings.Repeat(line, in.Size/len(line)+1)[:in.Size]), nil
	}
	return []tools.Tool{
		tools.Define(tools.Spec{Name: "probe", Description: "Return output.", ConcurrencySafe: true}, run),
		tools.Define(tools.Spec{Name: "change", Description: "Change something.", SideEffects: true}, run),
	}
}

func killWriterMain(dir, id, seed string) int {
	report := os.NewFile(3, "report")
	n, _ := strconv.ParseUint(seed, 10, 64)
	rng := rand.New(rand.NewPCG(n, 7))
	model := replay.NewScripted()
	store := reportingStore{Store: session.NewJSONL(dir, session.StoreConfig{}), w: report, mu: &sync.Mutex{}}
	loop, err := agent.New(agent.WithModel(model), agent.WithTools(killTools()...), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithSystemPrompt("You are the kill test."))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kill helper:", err)
		return 1
	}
	ctx := context.Background()
	var sess *agent.Session
	if _, serr := os.Stat(filepath.Join(dir, id+".jsonl")); serr == nil {
		sess, err = loop.ResumeSession(ctx, id)
	} else {
		sess, err = loop.NewSession(ctx, session.Header{ID: id, Cwd: "/ws/kill"})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kill helper:", err)
		return 2
	}
	size := func() int {
		if rng.IntN(25) == 0 {
			if raceEnabled {
				return 192<<10 + rng.IntN(128<<10)
			}
			return 2<<20 + rng.IntN(2<<20) // large writes, which a kill can tear
		}
		return rng.IntN(2 << 10)
	}
	for turn := range 1000 {
		args := func() map[string]int { return map[string]int{"size": size(), "sleep": rng.IntN(2000)} }
		// Call ids are unique in a session, as providers make them.
		pre := fmt.Sprintf("%x-%d-", rng.Uint32(), turn)
		model.Push(
			replay.Call(replay.ToolCall(pre+"p1", "probe", args()), replay.ToolCall(pre+"p2", "probe", args()), replay.ToolCall(pre+"c1", "change", args())),
			replay.Call(replay.ToolCall(pre+"c2", "change", args()), replay.ToolCall(pre+"p3", "probe", args())),
			replay.Response{Text: fmt.Sprintf("turn %d done", turn)},
		)
		for _, err := range sess.Run(ctx, fmt.Sprintf("turn %d: do the \"work\"\nnow", turn)) {
			if err != nil {
				fmt.Fprintln(os.Stderr, "kill helper:", err)
				return 2
			}
		}
	}
	return 0
}

type reported struct {
	seq int64
	typ string
}

func TestKillWriterAtRandomPoints(t *testing.T) {
	// Each trial is a writer process killed once; the kinds of kill
	// (during start-up, aimed at a large write, anywhere) take turns, so
	// the few default trials see each of them.
	trials := longtest.Pick(12, 120)
	dir := t.TempDir()
	store := session.NewTestJSONL(dir, session.StoreConfig{})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	rng = rand.New(rand.NewPCG(seed, 2))

	var ids []string
	torn := 0
	for trial := range trials {
		// Chains of two kills on one session, then a new session.
		if trial%2 == 0 {
			ids = append(ids, fmt.Sprintf("kill-%03d", trial/2))
		}
		id := ids[len(ids)-1]
		before := loadedEvents(t, store, id)
		reports := runAndKill(t, dir, id, trial, rng)

		tr, err := store.Load(context.Background(), id)
		if err != nil && len(reports) == 0 && before == nil {
			// Killed before the session existed: the log must not exist
			// at all, rather than exist and fail to load.
			require.NoFileExists(t, store.Path(id), "trial %d: a log that does not load was left behind: %v", trial, err)
			continue
		}
		require.NoError(t, err, "trial %d: the log loads after the kill", trial)
		for _, w := range tr.Warnings {
			assert.Contains(t, w.Message, "torn", "trial %d: only torn lines are repaired: %s", trial, w)
		}
		if len(tr.Warnings) > 0 {
			torn++
		}
		checkContiguous(t, trial, tr)
		bySeq := map[int64]string{}
		for _, e := range tr.Events {
			bySeq[e.Seq] = e.Type()
		}
		for _, r := range reports {
			typ, ok := bySeq[r.seq]
			if assert.True(t, ok, "trial %d: reported event %d (%s) lost", trial, r.seq, r.typ) {
				assert.Equal(t, r.typ, typ, "trial %d: event %d", trial, r.seq)
			}
		}
		for _, e := range before {
			typ, ok := bySeq[e.seq]
			if assert.True(t, ok, "trial %d: event %d of an earlier run lost", trial, e.seq) {
				assert.Equal(t, e.typ, typ)
			}
		}
		resumeAndCheck(t, trial, store, tr)
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d trials, %d sessions, %d logs with a torn line", trials, len(ids), torn)

	// Every log in the directory loads, and listing sees them all.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok {
			continue
		}
		n++
		_, err := store.Load(context.Background(), id)
		assert.NoError(t, err, "log %s", e.Name())
	}
	infos, err := store.List(context.Background(), session.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, infos, n)
	// Search reads the repaired logs too: every session holds the
	// resumed turn's prompt.
	ms, err := search.Search(context.Background(), store, search.Options{Query: "after the kill", Workspace: "/ws/kill", Limit: 10 * trials})
	require.NoError(t, err)
	found := map[string]bool{}
	for _, m := range ms {
		found[m.Session.Header.ID] = true
	}
	assert.Len(t, found, n)
	for _, in := range infos {
		assert.Equal(t, "/ws/kill", in.Header.Cwd)
		ok := strings.HasPrefix(in.Title, "turn ") || in.Title == "after the kill"
		assert.True(t, ok, "title %q", in.Title)
	}
}

func loadedEvents(t *testing.T, store session.TestJSONL, id string) []reported {
	tr, err := store.Load(context.Background(), id)
	if err != nil {
		return nil
	}
	out := make([]reported, len(tr.Events))
	for i, e := range tr.Events {
		out[i] = reported{e.Seq, e.Type()}
	}
	return out
}

// runAndKill starts a writer, kills it after a random number of reported
// events and a random delay (or right at a large write, in odd trials;
// during start-up in one trial of eight), and returns what it reported.
func runAndKill(t *testing.T, dir, id string, trial int, rng *rand.Rand) []reported {
	t.Helper()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killHelperEnv+"="+dir, killIDEnv+"="+id, fmt.Sprintf("%s=%d", killSeedEnv, rng.Uint64()))
	cmd.ExtraFiles = []*os.File{pw}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	pw.Close()

	wantLines := rng.IntN(40)
	if trial%8 == 5 {
		wantLines = 0 // kill during start-up
	}
	delay := time.Duration(rng.IntN(3000)) * time.Microsecond
	// In half of the trials, aim the kill at a large write.
	aimAtWrite := trial%2 == 1

	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []reported
	parse := func(s string) {
		if strings.HasPrefix(s, "writing big") {
			return
		}
		seqText, typ, ok := strings.Cut(s, " ")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if assert.True(t, ok && err == nil, "report line %q", s) {
			got = append(got, reported{seq, typ})
		}
	}
	open := true
	for open && len(got) < wantLines {
		var s string
		s, open = <-lines
		if open {
			parse(s)
		}
	}
	for n := 0; open && aimAtWrite && n < 60; n++ {
		var s string
		s, open = <-lines
		if us, ok := strings.CutPrefix(s, "writing big "); ok {
			// The write starts about one encoding time from now.
			enc, _ := strconv.Atoi(us)
			delay = time.Duration(enc*(90+rng.IntN(30))/100) * time.Microsecond
			break
		}
		parse(s)
	}
	time.Sleep(delay)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	werr := cmd.Wait()
	for s := range lines {
		parse(s)
	}
	if ee, ok := werr.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
		t.Fatalf("the writer was not killed but ended: %v\n%s", werr, stderr.String())
	}
	return got
}

func checkContiguous(t *testing.T, trial int, tr *session.Transcript) {
	for i, e := range tr.Events {
		if !assert.Equal(t, int64(i+1), e.Seq, "trial %d: events are numbered without gaps", trial) {
			return
		}
	}
}

// resumeAndCheck resumes the session in this process, runs another turn,
// and checks what the model was sent: every call of the last step
// answered, by a synthetic result when the kill left it open.
func resumeAndCheck(t *testing.T, trial int, store session.TestJSONL, tr *session.Transcript) {
	t.Helper()
	id := tr.Header.ID
	hist := new(session.History).Add(tr.Events...)
	started := map[string]bool{}
	for _, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.AssistantMessage:
			clear(started) // only the starts of the last step count
		case *session.ToolStarted:
			started[p.CallID] = true
		}
	}
	want := map[string]harness.Code{}
	for _, c := range hist.Pending() {
		if started[c.ID] {
			want[c.ID] = harness.CodeOutcomeUnknown
		} else {
			want[c.ID] = harness.CodeNotRun
		}
	}

	model := replay.NewScripted(replay.Response{Text: "resumed"})
	loop, err := agent.New(agent.WithModel(model), agent.WithTools(killTools()...), agent.WithStores(agent.Stores{Sessions: store}),
		agent.WithSystemPrompt("You are the kill test."))
	require.NoError(t, err)
	defer loop.Close()
	sess, err := loop.ResumeSession(context.Background(), id)
	require.NoError(t, err, "trial %d: resume", trial)
	var end *agent.TurnEnd
	for ev, err := range sess.Run(context.Background(), "after the kill") {
		require.NoError(t, err)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end = te
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, session.ReasonCompleted, end.Reason, "trial %d", trial)
	require.NoError(t, sess.Close())

	reqs := model.Requests()
	require.Len(t, reqs, 1)
	// Every call the model made is answered right after it.
	msgs := reqs[0].Messages
	for i, m := range msgs {
		calls := m.ToolCalls()
		for j, c := range calls {
			k := i + 1 + j
			require.Less(t, k, len(msgs), "trial %d: call %s has no result", trial, c.ID)
			r := msgs[k].Content[0].ToolResult
			require.NotNil(t, r, "trial %d: call %s is followed by a result", trial, c.ID)
			assert.Equal(t, c.ID, r.CallID)
			if code, ok := want[c.ID]; ok && i == lastCallMessage(msgs) {
				assert.Equal(t, code, r.Code, "trial %d: synthetic result of %s", trial, c.ID)
				assert.True(t, r.IsError)
			}
		}
	}
	last := msgs[len(msgs)-1]
	assert.Equal(t, "after the kill", last.Text())

	after, err := store.Load(context.Background(), id)
	require.NoError(t, err)
	require.Greater(t, len(after.Events), len(tr.Events))
	for i, e := range tr.Events {
		assert.Equal(t, e.Seq, after.Events[i].Seq)
	}
	checkContiguous(t, trial, after)
	te, ok := after.Events[len(after.Events)-1].Data.(*session.TurnEnded)
	require.True(t, ok)
	assert.Equal(t, session.ReasonCompleted, te.Reason)
	if hist.Interrupted() {
		ended := after.Events[len(tr.Events)].Data.(*session.TurnEnded)
		assert.Equal(t, session.ReasonInterrupted, ended.Reason, "trial %d: the open turn is closed as interrupted", trial)
	}
}

func lastCallMessage(msgs []harness.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if len(msgs[i].ToolCalls()) > 0 {
			return i
		}
	}
	return -1
}
