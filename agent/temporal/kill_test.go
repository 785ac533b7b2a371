//go:build linux

package temporal_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/agent/temporal/internal/effect"
	"github.com/go-harness/harness/agent/temporal/internal/fakemodel"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// The shape of the kill trial.
const (
	killSessions  = 4  // sessions running turns at once
	killMinTurns  = 2  // turns each session runs at least
	killWorkers   = 3  // worker processes alive at any time
	callsPerStep  = 2  // record_effect calls per step
	stepsPerTurn  = 3  // steps with tool calls per turn
	effectSleepMS = 80 // how long each call takes
)

// kills is the number of worker kills: 50 in the long trial
// (HARNESS_LONG_TESTS=1, as internal/longtest of the root module reads
// it), 3 otherwise.
func kills() int {
	if os.Getenv("HARNESS_LONG_TESTS") == "1" {
		return 50
	}
	return 3
}

// workerPool runs worker processes of one binary and configuration.
type workerPool struct {
	t    *testing.T
	bin  string
	args []string
	env  []string
	dir  string
	mu   sync.Mutex
	live []*exec.Cmd
	all  []*exec.Cmd
	n    int
}

func (p *workerPool) start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	logf, err := os.Create(filepath.Join(p.dir, fmt.Sprintf("worker-%d.log", p.n)))
	require.NoError(p.t, err)
	defer logf.Close()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// A worker dies with the test process, whatever happens to it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(p.t, cmd.Start())
	p.live = append(p.live, cmd)
	p.all = append(p.all, cmd)
}

// killOne SIGKILLs a random live worker and starts a replacement.
func (p *workerPool) killOne(r *rand.Rand) {
	p.mu.Lock()
	i := r.IntN(len(p.live))
	cmd := p.live[i]
	p.live = append(p.live[:i], p.live[i+1:]...)
	p.mu.Unlock()
	require.NoError(p.t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	p.start()
}

// stop kills every worker and checks that none is left.
func (p *workerPool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cmd := range p.live {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	p.live = nil
	for _, cmd := range p.all {
		err := syscall.Kill(cmd.Process.Pid, 0)
		assert.ErrorIs(p.t, err, syscall.ESRCH, "worker process %d is still there", cmd.Process.Pid)
	}
}

// setGate lets the record_effect calls of the workers started with
// -gate=path run up to those of step (a larger step than any lets all
// run): the file is replaced whole, never read half written.
func setGate(t *testing.T, path string, step int) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(strconv.Itoa(step)), 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// openGate is the step of setGate that lets every call run.
const openGate = 1 << 20

// waitLog waits until the session's log satisfies ok, or fails the
// test when ctx ends first (what says what was waited for).
func waitLog(t *testing.T, ctx context.Context, store session.Store, id, what string, ok func([]session.Event) bool) []session.Event {
	t.Helper()
	for {
		tr, err := store.Load(ctx, id)
		if err == nil && ok(tr.Events) {
			return tr.Events
		}
		select {
		case <-ctx.Done():
			t.Fatalf("session %s: %s never happened", id, what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// heldCall reports whether the log holds cuts interrupted turn ends and,
// after the last of them, a call of a step after gated that started and
// has not ended: a call the gate holds, in the worker that runs the
// turn now.
func heldCall(events []session.Event, cuts, gated int) bool {
	n := 0
	open := map[string]bool{}
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.TurnEnded:
			if p.Reason == session.ReasonInterrupted {
				n++
				clear(open)
			}
		case *session.ToolStarted:
			if p.Step > gated {
				open[p.CallID] = true
			}
		case *session.ToolFinished:
			delete(open, p.CallID)
		}
	}
	return n == cuts && len(open) > 0
}

// workerFleet is the setup the tests of worker processes share: the
// servers, a schema of its own, the fake model, the worker binary, and a
// pool of workers (none started yet) on a task queue of their own, with
// a client of that queue.
type workerFleet struct {
	pool    *workerPool
	client  *temporal.Client
	store   session.Store
	effects string // where the workers' bash commands note their effects
}

// newWorkerFleet sets up a fleet whose queue's name starts with prefix;
// extra are flags added to every worker's command line.
func newWorkerFleet(t *testing.T, prefix string, extra ...string) *workerFleet {
	t.Helper()
	addr, pgBase := servers(t)
	dir := t.TempDir()
	bin := buildWorker(t, dir)
	pgURL, store := newSchema(t, pgBase)
	fake := httptest.NewServer(fakemodel.Handler())
	t.Cleanup(fake.Close)
	effects := filepath.Join(dir, "effects") // the bash command writes "effects" in its working directory
	queue := randomName(prefix)
	pool := &workerPool{
		t: t, bin: bin, dir: dir,
		args: append([]string{"-temporal", addr, "-postgres", pgURL, "-task-queue", queue, "-effects", effects, "-workspace", dir}, extra...),
		env:  []string{"HARNESS_BASE_URL=" + fake.URL, "HARNESS_MODEL=" + fakemodel.Model, "HARNESS_API_KEY=unused"},
	}
	t.Cleanup(pool.stop)
	c := temporal.NewClient(dialTemporal(t, addr), temporal.ClientConfig{TaskQueue: queue})
	return &workerFleet{pool: pool, client: c, store: store, effects: effects}
}

// buildWorker builds cmd/worker into dir.
func buildWorker(t *testing.T, dir string) string {
	t.Helper()
	built.once.Do(func() {
		bin := filepath.Join(dir, "worker")
		out, err := exec.Command("go", "build", "-o", bin, "./cmd/worker").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("building the worker: %v: %s", err, out)
			return
		}
		// Kept for the package's other kill trials, removed with the
		// test's directory: copy it out first.
		data, err := os.ReadFile(bin)
		if err == nil {
			built.data = data
		}
		built.err = err
	})
	require.NoError(t, built.err)
	bin := filepath.Join(dir, "worker")
	if _, err := os.Stat(bin); err != nil {
		require.NoError(t, os.WriteFile(bin, built.data, 0o755))
	}
	return bin
}

// built is the worker binary, built once for the trials of a run.
var built struct {
	once sync.Once
	data []byte
	err  error
}

type turnRun struct {
	session string
	turn    int
	prompt  string
	res     temporal.TurnResult
	// approvals counts the answers the turn's pauses got.
	approvals int
	err       error
}

var answerRE = regexp.MustCompile(`^done: (\d+) results, (\d+) outcome unknown$`)

// TestKillWorkers runs turns on several worker processes and SIGKILLs a
// random worker at random moments, starting a replacement each time.
// Every turn must complete; the log must hold each prompt once, an end
// for every started call, and no call may have run twice.
func TestKillWorkers(t *testing.T) { killTrial(t, false) }

// TestKillWorkersFullToolset is the kill trial on turns that write, read
// and edit a file, run a bash command, start a sub-agent and wait for an
// approval: workers die during each of these. Every call with a side
// effect (the bash command, the sub-agent's call, the approved call)
// leaves at most one line, exactly one unless its outcome is unknown.
func TestKillWorkersFullToolset(t *testing.T) { killTrial(t, true) }

// fullSleepMS is how long the full trial's bash command and effect
// calls take.
const fullSleepMS = 300

func killTrial(t *testing.T, full bool) {
	ctx := context.Background()
	f := newWorkerFleet(t, "harness-kill-", fmt.Sprintf("-full=%t", full))
	pool, c, store, effects := f.pool, f.client, f.store, f.effects
	for range killWorkers {
		pool.start()
	}

	want := kills()
	var killed atomic.Int64
	var killing atomic.Bool
	killing.Store(true)
	run := randomName("")
	var mu sync.Mutex
	var runs []turnRun
	var wg sync.WaitGroup
	start := time.Now()
	for s := range killSessions {
		wg.Go(func() {
			id := fmt.Sprintf("kill-%s-%d", run, s)
			for n := 1; n <= killMinTurns || killing.Load(); n++ {
				prompt := fmt.Sprintf("effects=%d steps=%d sleep=%d (session %s, turn %d)", callsPerStep, stepsPerTurn, effectSleepMS, id, n)
				if full {
					prompt = fmt.Sprintf("full sleep=%d session=%s turn=%d", fullSleepMS, id, n)
				}
				tr := turnRun{session: id, turn: n, prompt: prompt}
				wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
				turn, err := c.Start(wctx, temporal.TurnInput{SessionID: id, Create: &session.Header{}, Prompt: prompt, Timeout: 5 * time.Minute})
				if err == nil {
					tr.res, tr.approvals, err = approveAll(wctx, turn)
				}
				cancel()
				tr.err = err
				mu.Lock()
				runs = append(runs, tr)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 18))
	t.Logf("%d random kills, seed %d", want, seed)
	// The first kill waits until every session's first turn runs a
	// call, so that kills land in turns, not in the workers' start-ups
	// (a Go binary, a Temporal client, pollers), however slow those are.
	startCtx, cancelStart := context.WithTimeout(ctx, 5*time.Minute)
	for s := range killSessions {
		waitLog(t, startCtx, store, fmt.Sprintf("kill-%s-%d", run, s), "a call of the first turn", func(events []session.Event) bool {
			for _, e := range events {
				if _, ok := e.Data.(*session.ToolStarted); ok {
					return true
				}
			}
			return false
		})
	}
	cancelStart()
	childKills := 0
	for killed.Load() < int64(want) {
		time.Sleep(time.Duration(150+r.IntN(550)) * time.Millisecond)
		// In the full trial every other kill waits for a sub-agent's
		// call to run (a child workflow's turn), for up to 3 seconds.
		if full && killed.Load()%2 == 1 && waitChildCall(ctx, store, run, 3*time.Second) {
			childKills++
		}
		pool.killOne(r)
		killed.Add(1)
	}
	killing.Store(false)
	wg.Wait()
	elapsed := time.Since(start)

	// Every turn completed, and the model was told of each call whose
	// outcome is unknown.
	bySession := map[string][]turnRun{}
	moves := 0
	for _, tr := range runs {
		if tr.err != nil {
			if lg, err := store.Load(ctx, tr.session); err == nil {
				f.explain(t, tr.session, lg.Events)
			}
		}
		require.NoError(t, tr.err, "turn %d of %s", tr.turn, tr.session)
		assert.Equal(t, session.ReasonCompleted, tr.res.Reason)
		assert.Equal(t, tr.turn, tr.res.Turn)
		m := answerRE.FindStringSubmatch(tr.res.Answer)
		require.NotNil(t, m, "answer %q", tr.res.Answer)
		calls := callsPerStep * stepsPerTurn
		if full {
			calls = 6
		}
		assert.Equal(t, strconv.Itoa(calls), m[1], "every call got a result the model read")
		moves += tr.res.Moves
		bySession[tr.session] = append(bySession[tr.session], tr)
	}
	lines := effectLines(t, effects)
	calls, unknownCalls := 0, 0
	for id, trs := range bySession {
		tr, err := store.Load(ctx, id)
		require.NoError(t, err)
		failed := t.Failed()
		n, u := checkLog(t, id, tr.Events, trs, lines)
		if !failed && t.Failed() {
			f.explain(t, id, tr.Events)
		}
		calls += n
		unknownCalls += u
	}
	// The sub-agents' sessions (child workflows): each checked as a
	// session of one turn, its calls run once unless cut off.
	children, childCut := 0, 0
	cutApprovals, cutTasks := 0, 0 // pauses cut off before their end
	childOf := map[string]bool{}
	for id, trs := range bySession {
		tr, err := store.Load(ctx, id)
		require.NoError(t, err)
		pauses := turnPauses(tr.Events)
		failed := t.Failed()
		for _, trn := range trs {
			if !full || !assert.Less(t, trn.turn-1, len(pauses), "session %s: turn %d is in the log", id, trn.turn) {
				continue
			}
			p := pauses[trn.turn-1]
			if !p.approval {
				cutApprovals++
			}
			cutTasks += len(p.cutTasks)
			if p.approval {
				assert.GreaterOrEqual(t, trn.approvals, 1, "session %s: turn %d waited for an approval and got it", id, trn.turn)
			} else {
				// A worker died between the model's approved_effect call
				// and the end of its pause: the call was never asked
				// for, so never run, and the next worker told the model
				// so.
				assert.True(t, p.cut && !p.approvedStarted, "session %s: turn %d asked no approval: its approved_effect call must have been cut off before it, and not run", id, trn.turn)
			}
			for _, call := range p.cutTasks {
				// Likewise a task call whose pause did not end: it was
				// reported not run, and no sub-agent ran it.
				_, err := store.Load(ctx, agent.TaskSessionID(id, call))
				assert.ErrorIs(t, err, harness.CodeNotFound, "session %s: the task call %s, cut off before its pause ended, has no sub-agent", id, call)
			}
		}
		if !failed && t.Failed() {
			f.explain(t, id, tr.Events)
		}
		for _, p := range pauses {
			for _, call := range p.tasks {
				cid := agent.TaskSessionID(id, call)
				if childOf[cid] {
					continue
				}
				childOf[cid] = true
				ctr, err := store.Load(ctx, cid)
				if err != nil {
					f.explain(t, id, tr.Events)
				}
				require.NoError(t, err, "the sub-agent session of %s call %s", id, call)
				assert.Equal(t, id, ctr.Header.Parent)
				var prompt string
				for _, ce := range ctr.Events {
					if u, ok := ce.Data.(*session.UserMessage); ok {
						prompt = u.Content[0].Text
						break
					}
				}
				failed := t.Failed()
				n, u := checkLog(t, cid, ctr.Events, []turnRun{{session: cid, turn: 1, prompt: prompt}}, lines)
				if !failed && t.Failed() {
					f.explain(t, cid, ctr.Events)
				}
				calls += n
				unknownCalls += u
				children++
				for _, ce := range ctr.Events {
					if te, ok := ce.Data.(*session.TurnEnded); ok && te.Reason == session.ReasonInterrupted {
						childCut++
						break
					}
				}
			}
		}
	}
	for key := range lines {
		sid, _, _ := strings.Cut(key, " ")
		_, parent := bySession[sid]
		assert.True(t, parent || childOf[sid], "the effect %q is of a session of this run or of one of its sub-agents", key)
	}
	if full {
		assert.Positive(t, children, "the sub-agents ran")
	}

	// The sessions resume in the plain loop with nothing to repair, once
	// the workers that hold them open are gone.
	pool.stop()
	loop, err := agent.New(agent.WithModel(fakeModel(t)), agent.WithTools(effect.Tool(effects)), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	defer loop.Close()
	for id := range bySession {
		// The log as the workers left it, before the resume repairs it.
		before, err := store.Load(ctx, id)
		require.NoError(t, err)
		s, waits, err := resumeFreed(ctx, loop, id)
		require.NoError(t, err)
		if waits > 0 {
			t.Logf("session %s: the plain loop's resume found it locked %d times before the killed workers' connections went", id, waits)
		}
		if !assert.Empty(t, s.Warnings(), "session %s resumes without repairs", id) || !assert.False(t, s.Interrupted(), "session %s resumes with its last turn ended", id) {
			for _, w := range s.Warnings() {
				t.Logf("session %s: repair: %s", id, w)
			}
			f.explain(t, id, before.Events)
		}
		require.NoError(t, s.Close())
	}
	t.Logf("%d kills survived by %d turns of %d sessions on %d workers in %s (%d moves)", killed.Load(), len(runs), len(bySession), killWorkers, elapsed.Round(time.Millisecond), moves)
	t.Logf("| kills | turns | calls | effects | outcome unknown |")
	t.Logf("| %5d | %5d | %5d | %7d | %15d |", killed.Load(), len(runs), calls, len(lines), unknownCalls)
	if full {
		t.Logf("sub-agents: %d child workflows, %d kills aimed at a sub-agent's running call, %d sub-agent turns cut off and continued", children, childKills, childCut)
		t.Logf("pauses cut off before their end (their calls not run): %d approvals, %d task calls", cutApprovals, cutTasks)
	}
}

// turnPause is what a turn of the full trial's log says of its pauses.
type turnPause struct {
	// approval: the turn paused awaiting_approval (the pause's end is
	// logged), so the test was asked.
	approval bool
	// approvedStarted: its approved_effect call started.
	approvedStarted bool
	// cut: the turn was cut off at least once (an interrupted end).
	cut bool
	// tasks are the task calls of its awaiting_tool pauses that ended
	// (each has a sub-agent); cutTasks those of a pause cut off before
	// its end (none has).
	tasks, cutTasks []string
}

// turnPauses reads the pauses of each turn of a log, the first turn's
// first.
func turnPauses(events []session.Event) []turnPause {
	var out []turnPause
	var pending []string // the task calls of a pause whose end is not logged yet
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.UserMessage:
			if !p.Steer {
				out = append(out, turnPause{})
			}
		}
		if len(out) == 0 {
			continue
		}
		cur := &out[len(out)-1]
		switch p := e.Data.(type) {
		case *session.Paused:
			if p.Reason == session.ReasonAwaitingTool {
				pending = p.Calls
			}
		case *session.ToolStarted:
			if p.Name == "approved_effect" {
				cur.approvedStarted = true
			}
		case *session.TurnEnded:
			switch p.Reason {
			case session.ReasonAwaitingApproval:
				cur.approval = true
			case session.ReasonAwaitingTool:
				cur.tasks = append(cur.tasks, pending...)
			case session.ReasonInterrupted:
				cur.cut = true
				cur.cutTasks = append(cur.cutTasks, pending...)
			}
			pending = nil
		}
	}
	return out
}

// resumeFreed resumes a session in the plain loop once the store's lock
// on it is free. A SIGKILLed worker's connection, and the lock it held,
// go when PostgreSQL notices the socket closed, a moment after the
// process is gone (longer on a loaded machine): until then the session
// is locked, not broken.
// It returns how many times it found the session locked.
func resumeFreed(ctx context.Context, loop *agent.Loop, id string) (*agent.Session, int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for waits := 0; ; waits++ {
		s, err := loop.ResumeSession(ctx, id)
		if !errors.Is(err, harness.CodeLocked) {
			return s, waits, err
		}
		select {
		case <-ctx.Done():
			return nil, waits, fmt.Errorf("%w (and still locked a minute after its workers were killed)", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tailEvents is how many of a session's last log records a failed check
// of it prints.
const tailEvents = 40

// explain logs what a failed check of session id needs to be
// diagnosed: the last records of its log, and the lines of the workers'
// logs that name it. Each goes on a line of its own, with the file's
// name, so that a filter of the test's output on it keeps them.
func (f *workerFleet) explain(t *testing.T, id string, events []session.Event) {
	t.Helper()
	from := max(0, len(events)-tailEvents)
	t.Logf("session %s: %d log records, the last %d:", id, len(events), len(events)-from)
	for _, e := range events[from:] {
		b, err := e.MarshalJSON()
		line := string(b)
		if err != nil {
			line = fmt.Sprintf("%s (does not encode: %v)", e.Type(), err)
		}
		if len(line) > 700 {
			line = line[:700] + "..."
		}
		t.Logf("session %s: %s", id, line)
	}
	logs, _ := filepath.Glob(filepath.Join(f.pool.dir, "worker-*.log"))
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			if strings.Contains(line, id) {
				t.Logf("%s: %s", filepath.Base(p), strings.TrimRight(line, "\n"))
			}
		}
	}
}

// effectful are the tools whose calls leave a line in the effects file
// of the session that made them.
var effectful = map[string]bool{"record_effect": true, "approved_effect": true, "bash": true}

// approveAll waits for the turn to end, approving every call it waits
// for, and returns its result and how many answers it sent.
func approveAll(ctx context.Context, turn *temporal.Turn) (temporal.TurnResult, int, error) {
	answered := 0
	for {
		st, err := turn.Status(ctx)
		if err != nil {
			return temporal.TurnResult{}, answered, err
		}
		switch st.State {
		case temporal.StateEnded:
			res, err := turn.Wait(ctx)
			return res, answered, err
		case temporal.StatePaused:
			if st.Pause != nil && len(st.Pause.Approvals) > 0 {
				a := map[string]permission.Answer{}
				for _, r := range st.Pause.Approvals {
					a[r.Call.ID] = permission.Answer{Allow: true}
				}
				if err := turn.Answer(ctx, agent.Answers{Approvals: a}); err != nil {
					return temporal.TurnResult{}, answered, err
				}
				answered++
				// Wait for the answer to be taken before looking again.
				for {
					st, err := turn.Status(ctx)
					if err != nil {
						return temporal.TurnResult{}, answered, err
					}
					if st.State != temporal.StatePaused || st.AnswerError != "" {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
		select {
		case <-ctx.Done():
			return temporal.TurnResult{}, answered, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// effectLines counts the effects file's lines by "<session> <call>".
func effectLines(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}
	}
	require.NoError(t, err)
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out[sc.Text()]++
	}
	require.NoError(t, sc.Err())
	return out
}

// checkLog checks one session's log against its turns and the effects,
// and returns the number of its tool calls and of those whose outcome is
// unknown. A call cut off by a dying worker has its start and no end
// of its own: the interrupted turn end that follows gives it its
// outcome-unknown result (as the agent loop logs a crash).
func checkLog(t *testing.T, id string, events []session.Event, trs []turnRun, lines map[string]int) (int, int) {
	t.Helper()
	var prompts []string
	started := map[string]int{}
	names := map[string]string{}
	finished := map[string][]*session.ToolFinished{}
	cutOff := map[string]bool{}
	open := map[string]bool{} // started, no end yet
	completed := 0
	var lastEnd string
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Seq, "session %s: sequence numbers are contiguous", id)
		switch p := e.Data.(type) {
		case *session.UserMessage:
			if p.Steer {
				continue
			}
			if len(prompts) > 0 {
				assert.Equal(t, session.ReasonCompleted, lastEnd, "session %s: each turn ends completed", id)
			}
			prompts = append(prompts, p.Content[0].Text)
			lastEnd = ""
		case *session.ToolStarted:
			started[p.CallID]++
			names[p.CallID] = p.Name
			open[p.CallID] = true
		case *session.ToolFinished:
			finished[p.CallID] = append(finished[p.CallID], p)
			delete(open, p.CallID)
		case *session.TurnEnded:
			lastEnd = p.Reason
			switch p.Reason {
			case session.ReasonCompleted:
				completed++
				assert.Empty(t, open, "session %s: a turn completed with calls open", id)
			case session.ReasonInterrupted:
				for c := range open {
					cutOff[c] = true
				}
				clear(open)
			case session.ReasonAwaitingApproval, session.ReasonAwaitingTool:
				// A pause; the answer continues the turn.
			default:
				t.Errorf("session %s: a turn ended %s", id, p.Reason)
			}
		}
	}
	assert.Equal(t, session.ReasonCompleted, lastEnd, "session %s: the last turn completed", id)
	var want []string
	for n := 1; n <= len(trs); n++ {
		for _, tr := range trs {
			if tr.turn == n {
				want = append(want, tr.prompt)
			}
		}
	}
	assert.Equal(t, want, prompts, "session %s: each turn's prompt logged once, in order", id)
	assert.Equal(t, len(trs), completed, "session %s: one completed end per turn", id)
	unknown := 0
	for call, n := range started {
		assert.Equal(t, 1, n, "session %s: call %s started once", id, call)
		if fs := finished[call]; !cutOff[call] {
			assert.Len(t, fs, 1, "session %s: call %s has exactly one end", id, call)
		}
		fs := finished[call]
		effects := lines[id+" "+call]
		if !effectful[names[call]] {
			continue
		}
		switch {
		case cutOff[call]:
			assert.Empty(t, fs, "session %s: call %s was cut off and has no end of its own", id, call)
			assert.LessOrEqual(t, effects, 1, "session %s: call %s of unknown outcome ran at most once", id, call)
			unknown++
		default:
			assert.Equal(t, 1, effects, "session %s: call %s ran exactly once", id, call)
		}
	}
	for call := range finished {
		assert.Contains(t, started, call, "session %s: call %s ended without a start", id, call)
	}
	for key, n := range lines {
		sid, call, _ := strings.Cut(key, " ")
		if sid != id {
			continue
		}
		assert.LessOrEqual(t, n, 1, "session %s: call %s ran %d times", id, call, n)
		assert.Contains(t, started, call, "session %s: call %s had an effect without a logged start", id, call)
	}
	return len(started), unknown
}

// waitChildCall waits, up to d, until a sub-agent of the run's sessions
// has a tool call running: a start logged in its child session and no
// end. It reports whether one did.
func waitChildCall(ctx context.Context, store session.Store, run string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for s := range killSessions {
			id := fmt.Sprintf("kill-%s-%d", run, s)
			tr, err := store.Load(ctx, id)
			if err != nil {
				continue
			}
			waiting := map[string]bool{}
			for _, e := range tr.Events {
				switch p := e.Data.(type) {
				case *session.Paused:
					if p.Reason == session.ReasonAwaitingTool {
						for _, c := range p.Calls {
							waiting[c] = true
						}
					}
				case *session.ToolStarted:
					delete(waiting, p.CallID)
				}
			}
			for call := range waiting {
				ctr, err := store.Load(ctx, agent.TaskSessionID(id, call))
				if err != nil {
					continue
				}
				open := map[string]bool{}
				for _, e := range ctr.Events {
					switch p := e.Data.(type) {
					case *session.ToolStarted:
						open[p.CallID] = true
					case *session.ToolFinished:
						delete(open, p.CallID)
					case *session.TurnEnded:
						clear(open)
					}
				}
				if len(open) > 0 {
					return true
				}
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	return false
}
