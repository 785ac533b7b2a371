package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/longtest"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// pauseOne runs a turn whose one mark call waits for approval, in a
// session of store with the given id, and closes its loop.
func pauseOne(t *testing.T, store session.Store, id, marksFile string) {
	t.Helper()
	ctx := context.Background()
	m := replay.NewScripted(replay.Call(replay.ToolCall("c1", "mark", map[string]any{"text": "approved"})))
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(markTool(marksFile)),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithPermissions(policy(t, permission.Rules{})))
	require.NoError(t, err)
	s, err := loop.NewSession(ctx, session.Header{ID: id, Cwd: "/proj"})
	require.NoError(t, err)
	_, end, err := collect(t, s, ctx, "do it")
	require.NoError(t, err)
	require.Equal(t, session.ReasonAwaitingApproval, end.Reason)
	require.NoError(t, loop.Close())
}

// resolver is a loop that resumes a paused session and answers it.
func resolver(t *testing.T, store session.Store, marksFile string) *agent.Loop {
	t.Helper()
	loop, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "all done"})), agent.WithTools(markTool(marksFile)),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithPermissions(policy(t, permission.Rules{})))
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	return loop
}

// resumeAndAllow resumes id and allows every waiting call; it returns
// the error that stopped it, if any.
func resumeAndAllow(ctx context.Context, loop *agent.Loop, id string) error {
	s, err := loop.ResumeSession(ctx, id)
	if err != nil {
		return err
	}
	defer s.Close()
	answers := map[string]permission.Answer{}
	for _, r := range s.Pending() {
		answers[r.Call.ID] = permission.Answer{Allow: true, Digest: r.Digest}
	}
	if len(answers) == 0 {
		answers["c1"] = permission.Answer{Allow: true}
	}
	_, err = runAll(s.Resolve(ctx, answers))
	return err
}

func TestPendingCarriesDigest(t *testing.T) {
	dir := t.TempDir()
	store := session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{})
	pauseOne(t, store, "paused", filepath.Join(dir, "marks"))
	logged := logEvents(t, store, "paused")
	asked := ofPayload[*session.ApprovalRequested](logged)
	require.Len(t, asked, 1)
	require.Len(t, asked[0].Calls, 1)
	assert.True(t, strings.HasPrefix(asked[0].Calls[0].Digest, "sha256:") && len(asked[0].Calls[0].Digest) == len("sha256:")+64,
		"the question logs the call's digest: %q", asked[0].Calls[0].Digest)

	_, s := resumeSession(t, "paused", agent.WithModel(replay.NewScripted(replay.Response{Text: "ok"})), agent.WithTools(markTool(filepath.Join(dir, "marks"))),
		agent.WithStores(agent.Stores{Sessions: store}), agent.WithPermissions(policy(t, permission.Rules{})))
	p := s.Pending()
	require.Len(t, p, 1)
	assert.Equal(t, asked[0].Calls[0].Digest, p[0].Digest, "Pending shows the digest a host may send back")
}

// TestResolveRefusesChangedCall: the log is changed between the
// question and the answer (the call's arguments rewritten); the answer
// is refused, nothing runs and nothing is logged.
func TestResolveRefusesChangedCall(t *testing.T) {
	dir := t.TempDir()
	marksFile := filepath.Join(dir, "marks")
	store := session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{})
	pauseOne(t, store, "paused", marksFile)
	before := len(logEvents(t, store, "paused"))

	file := filepath.Join(dir, "sessions", "paused.jsonl")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), `\"text\":\"approved\"`)
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(data), `\"text\":\"approved\"`, `\"text\":\"rm -rf /\"`, 1)), 0o644))

	ctx := context.Background()
	loop := resolver(t, store, marksFile)
	s, err := loop.ResumeSession(ctx, "paused")
	require.NoError(t, err)
	require.Len(t, s.Pending(), 1)
	_, err = runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true}}))
	require.Error(t, err)
	assert.ErrorIs(t, err, agent.CodeCallChanged)
	assert.Contains(t, err.Error(), "is not the call that was asked about")
	assert.Empty(t, marks(t, marksFile), "the changed call did not run")
	require.NoError(t, s.Close())
	assert.Len(t, logEvents(t, store, "paused"), before, "nothing was logged")
}

// TestResolveRefusesAnswerForAnotherCall: an answer carrying the digest
// of another version of the call is refused; the right one runs it.
func TestResolveRefusesAnswerForAnotherCall(t *testing.T) {
	dir := t.TempDir()
	marksFile := filepath.Join(dir, "marks")
	store := session.NewMemory(session.StoreConfig{})
	pauseOne(t, store, "paused", marksFile)
	ctx := context.Background()
	loop := resolver(t, store, marksFile)
	s, err := loop.ResumeSession(ctx, "paused")
	require.NoError(t, err)
	defer s.Close()
	p := s.Pending()
	require.Len(t, p, 1)
	_, err = runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true, Digest: "sha256:" + strings.Repeat("0", 64)}}))
	assert.ErrorIs(t, err, agent.CodeCallChanged)
	assert.Contains(t, err.Error(), "another version of the call")
	assert.Empty(t, marks(t, marksFile))
	require.Len(t, s.Pending(), 1, "the question still waits")

	_, err = runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true, Digest: p[0].Digest}}))
	require.NoError(t, err)
	assert.Equal(t, []string{"approved"}, marks(t, marksFile))
}

// TestResolveRaceTwoLoops resolves one paused session from two loops at
// once, each with its own store value on the same directory (JSONL) or
// the same store (memory): exactly one runs the call, the other fails
// with locked or nothing_pending.
func TestResolveRaceTwoLoops(t *testing.T) {
	trials := longtest.Pick(10, 100)
	for _, kind := range []string{"jsonl", "memory"} {
		t.Run(kind, func(t *testing.T) {
			mem := session.NewMemory(session.StoreConfig{})
			for trial := range trials {
				dir := t.TempDir()
				marksFile := filepath.Join(dir, "marks")
				newStore := func() session.Store {
					if kind == "memory" {
						return mem
					}
					return session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{})
				}
				id := fmt.Sprintf("race%d", trial)
				pauseOne(t, newStore(), id, marksFile)
				loops := []*agent.Loop{resolver(t, newStore(), marksFile), resolver(t, newStore(), marksFile)}
				errs := make([]error, 2)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range loops {
					wg.Go(func() {
						<-start
						errs[i] = resumeAndAllow(context.Background(), loops[i], id)
					})
				}
				close(start)
				wg.Wait()
				wins := 0
				for _, err := range errs {
					if err == nil {
						wins++
						continue
					}
					code := harness.CodeOf(err)
					assert.True(t, code == harness.CodeLocked || code == agent.CodeNothingPending, "the loser gets locked or nothing_pending, not %v", err)
				}
				assert.Equal(t, 1, wins, "exactly one resolution wins: %v", errs)
				assert.Equal(t, []string{"approved"}, marks(t, marksFile), "the call ran exactly once")
			}
		})
	}
}

// resolveHelperEnv makes the test binary resolve a paused session as a
// second process would, and report how it ended.
const resolveHelperEnv = "HARNESS_TEST_RESOLVE_HELPER"

func TestResolveHelperProcess(t *testing.T) {
	dir := os.Getenv(resolveHelperEnv)
	if dir == "" {
		t.Skip("run by TestResolveRaceTwoProcesses")
	}
	store := session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{})
	loop := resolver(t, store, filepath.Join(dir, "marks"))
	err := resumeAndAllow(context.Background(), loop, "paused")
	loop.Close()
	if err != nil {
		fmt.Printf("RESULT %s\n", harness.CodeOf(err))
		os.Exit(4)
	}
	fmt.Printf("RESULT ok\n")
	os.Exit(0)
}

// TestResolveRaceTwoProcesses: two processes resolve the same paused
// session of a JSONL store at once; one runs the call, the other gets
// locked or nothing_pending.
func TestResolveRaceTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	marksFile := filepath.Join(dir, "marks")
	pauseOne(t, session.NewJSONL(filepath.Join(dir, "sessions"), session.StoreConfig{}), "paused", marksFile)
	var cmds []*exec.Cmd
	outs := make([]*strings.Builder, 2)
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestResolveHelperProcess$")
		cmd.Env = append(os.Environ(), resolveHelperEnv+"="+dir)
		outs[i] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	var results []string
	for i, cmd := range cmds {
		_ = cmd.Wait()
		out := outs[i].String()
		k := strings.Index(out, "RESULT ")
		require.GreaterOrEqual(t, k, 0, "the helper reports its result: %s", out)
		results = append(results, strings.Fields(out[k+len("RESULT "):])[0])
	}
	wins := 0
	for _, r := range results {
		if r == "ok" {
			wins++
			continue
		}
		assert.Contains(t, []string{"locked", "nothing_pending"}, r)
	}
	assert.Equal(t, 1, wins, "exactly one process wins: %v", results)
	assert.Equal(t, []string{"approved"}, marks(t, marksFile), "the call ran exactly once")
}
