package postgres_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/postgres"
)

// The process tests re-execute the test binary as a writer (see
// TestMain): it opens one session and appends to it, reporting on its
// standard output, and the test kills it with SIGKILL.
const (
	helperEnv   = "HARNESS_POSTGRES_WRITER" // the schema
	helperIDEnv = "HARNESS_POSTGRES_WRITER_ID"
)

func TestMain(m *testing.M) {
	if schema := os.Getenv(helperEnv); schema != "" {
		os.Exit(writerMain(schema, os.Getenv(helperIDEnv)))
	}
	os.Exit(m.Run())
}

// eventText is the text of the reminder with sequence number seq.
func eventText(seq int64) string { return fmt.Sprintf("event %d of the writer", seq) }

// writerMain opens session id and appends batches of one to three
// reminders until it is killed, printing "acked N" once the append that
// ends with event N returned. When the session is locked it prints
// "refused CODE: MESSAGE" and exits with status 3.
func writerMain(schema, id string) int {
	cfg, err := pgxpool.ParseConfig(os.Getenv(urlEnv))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
	pool, err := pgxpool.NewWithConfig(ctx(), cfg)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer pool.Close()
	s, err := postgres.New(ctx(), pool, postgres.Config{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	log, tr, err := s.Open(ctx(), id)
	if err != nil {
		fmt.Printf("refused %s: %v\n", harness.CodeOf(err), err)
		return 3
	}
	defer log.Close()
	next := int64(1)
	if n := len(tr.Events); n > 0 {
		next = tr.Events[n-1].Seq + 1
	}
	fmt.Println("opened", next)
	pause, _ := strconv.Atoi(os.Getenv("HARNESS_POSTGRES_WRITER_PAUSE_MS"))
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for {
		n := 1 + r.IntN(3)
		var ps []session.Payload
		for i := range n {
			ps = append(ps, &session.Reminded{Reminder: harness.Reminder{Source: "writer", Text: eventText(next + int64(i))}})
		}
		evs, err := log.Append(ctx(), ps...)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		next = evs[len(evs)-1].Seq + 1
		fmt.Println("acked", evs[len(evs)-1].Seq)
		if pause > 0 {
			time.Sleep(time.Duration(pause) * time.Millisecond)
		}
	}
}

// writer is a running writer process.
type writer struct {
	cmd   *exec.Cmd
	lines chan string
	acked int64
}

func startWriter(t *testing.T, schema, id string, pauseMS int) *writer {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+schema, helperIDEnv+"="+id,
		"HARNESS_POSTGRES_WRITER_PAUSE_MS="+strconv.Itoa(pauseMS))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	w := &writer{cmd: cmd, lines: make(chan string, 1<<16)}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return w
}

// first returns the writer's first line of output.
func (w *writer) first(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-w.lines:
		require.True(t, ok, "the writer exited without a word")
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("the writer said nothing for 30 s")
		return ""
	}
}

// kill kills the writer and returns the last sequence number it
// reported as acknowledged.
func (w *writer) kill(t *testing.T) int64 {
	t.Helper()
	require.NoError(t, w.cmd.Process.Kill())
	_ = w.cmd.Wait()
	for l := range w.lines {
		if rest, ok := strings.CutPrefix(l, "acked "); ok {
			n, err := strconv.ParseInt(rest, 10, 64)
			require.NoError(t, err)
			w.acked = n
		} else {
			require.Failf(t, "unexpected writer output", "%q", l)
		}
	}
	return w.acked
}

// openAfterKill opens a session whose writer was just killed: the server
// releases the lock once it notices the connection closed.
func openAfterKill(t *testing.T, s session.Store, id string) (session.Log, *session.Transcript) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		log, tr, err := s.Open(ctx(), id)
		if err == nil {
			return log, tr
		}
		require.ErrorIs(t, err, harness.CodeLocked)
		if time.Now().After(deadline) {
			t.Fatalf("the lock of a killed writer was not released within a minute: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTwoProcessesContend runs two writer processes for one session: the
// second is refused with harness.CodeLocked while the first lives, as is
// this process; once the first is killed, the session opens again with
// every event it acknowledged.
func TestTwoProcessesContend(t *testing.T) {
	pool, schema := newSchema(t)
	s, err := postgres.New(ctx(), pool, postgres.Config{})
	require.NoError(t, err)
	log, err := s.Create(ctx(), session.Header{ID: "contended", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, log.Close())

	a := startWriter(t, schema, "contended", 2)
	require.Equal(t, "opened 1", a.first(t))

	b := startWriter(t, schema, "contended", 0)
	refusal := b.first(t)
	assert.Equal(t, "refused locked: session contended: open for appending elsewhere; close it there first", refusal)
	require.Error(t, b.cmd.Wait())
	assert.Equal(t, 3, b.cmd.ProcessState.ExitCode())

	_, _, err = s.Open(ctx(), "contended")
	assert.ErrorIs(t, err, harness.CodeLocked, "this process is refused too")
	assert.ErrorIs(t, s.Delete(ctx(), "contended"), harness.CodeLocked)
	tr, err := s.Load(ctx(), "contended")
	require.NoError(t, err, "reading works while the other process appends")

	time.Sleep(50 * time.Millisecond)
	acked := a.kill(t)
	require.Positive(t, acked)
	log, tr, err = func() (session.Log, *session.Transcript, error) {
		l, tr := openAfterKill(t, s, "contended")
		return l, tr, nil
	}()
	require.NoError(t, err)
	defer log.Close()
	checkWriterEvents(t, tr, acked)
}

// checkWriterEvents checks a transcript of writer events: numbered from
// 1 without gaps, each with its own text, none acknowledged missing.
func checkWriterEvents(t *testing.T, tr *session.Transcript, acked int64) {
	t.Helper()
	assert.Empty(t, tr.Warnings)
	require.GreaterOrEqual(t, int64(len(tr.Events)), acked, "every acknowledged event is there")
	for i, e := range tr.Events {
		require.Equal(t, int64(i+1), e.Seq)
		r, ok := e.Data.(*session.Reminded)
		require.True(t, ok)
		require.Equal(t, eventText(e.Seq), r.Text)
	}
}

// TestKillWriterLosesNothing kills a writer process at random points in
// its appends and checks that every event it acknowledged is there,
// numbered without gaps, and that appending goes on after the last.
func TestKillWriterLosesNothing(t *testing.T) {
	pool, schema := newSchema(t)
	s, err := postgres.New(ctx(), pool, postgres.Config{})
	require.NoError(t, err)
	log, err := s.Create(ctx(), session.Header{ID: "killed", Cwd: "/w"})
	require.NoError(t, err)
	require.NoError(t, log.Close())
	rounds := 3
	if os.Getenv("HARNESS_LONG_TESTS") != "" {
		rounds = 25
	}
	r := rand.New(rand.NewPCG(1, 2))
	var acked int64
	for round := range rounds {
		w := startWriter(t, schema, "killed", 0)
		require.Equal(t, fmt.Sprintf("opened %d", acked+1), w.first(t), "round %d resumes after every event so far", round)
		time.Sleep(time.Duration(5+r.IntN(100)) * time.Millisecond)
		acked = max(acked, w.kill(t))
		log, tr := openAfterKill(t, s, "killed")
		checkWriterEvents(t, tr, acked)
		// What the writer wrote but could not report is there too: the
		// next round starts after it.
		acked = int64(len(tr.Events))
		require.NoError(t, log.Close())
	}
	t.Logf("%d rounds, %d events", rounds, acked)
}
