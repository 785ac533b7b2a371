package shell

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// dirStore is an OutputStore double that saves to files in a directory.
type dirStore struct {
	dir string
	mu  sync.Mutex
	n   int
	// owners records who saved what.
	owners []tools.Owner
}

func newDirStore(t testing.TB) *dirStore { return &dirStore{dir: t.TempDir()} }

func (s *dirStore) Save(ctx context.Context, o tools.Owner, r io.Reader) (tools.Stored, error) {
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("out%d", s.n)
	s.owners = append(s.owners, o)
	s.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return tools.Stored{}, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return tools.Stored{}, err
	}
	return tools.Stored{Locator: tools.OutputScheme + name, Size: n}, nil
}

func (s *dirStore) Open(ctx context.Context, loc string) (io.ReadCloser, error) {
	name, ok := strings.CutPrefix(loc, tools.OutputScheme)
	if !ok || strings.ContainsAny(name, "/\\") {
		return nil, os.ErrNotExist
	}
	return os.Open(filepath.Join(s.dir, name))
}

func (s *dirStore) read(t testing.TB, loc string) string {
	t.Helper()
	rc, err := s.Open(context.Background(), loc)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return string(b)
}

// countStore is an OutputStore double that keeps only the size and the
// SHA-256 of what it is given, for outputs too big for a temp dir.
type countStore struct {
	mu    sync.Mutex
	saved map[string]countRec
	n     int
}

type countRec struct {
	size int64
	sum  string
}

func (s *countStore) Save(ctx context.Context, o tools.Owner, r io.Reader) (tools.Stored, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return tools.Stored{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	loc := fmt.Sprintf("%scount%d", tools.OutputScheme, s.n)
	if s.saved == nil {
		s.saved = map[string]countRec{}
	}
	s.saved[loc] = countRec{n, hex.EncodeToString(h.Sum(nil))}
	return tools.Stored{Locator: loc, Size: n}, nil
}

func (s *countStore) Open(ctx context.Context, loc string) (io.ReadCloser, error) {
	return nil, os.ErrNotExist
}

func (s *countStore) get(loc string) (countRec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.saved[loc]
	return r, ok
}

// records is a session log double for Env.Record; recordsOf finds an
// Env's.
type records struct {
	mu   sync.Mutex
	recs []record
}

type record struct {
	tool, name string
	data       json.RawMessage
}

func (r *records) Record(ctx context.Context, call *tools.Call, name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, record{call.Name, name, b})
	return nil
}

func (r *records) all() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.recs...)
}

// testEnv returns an Env rooted at a fresh directory, whose State is
// closed when the test ends.
func testEnv(t testing.TB) *tools.Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	st := &tools.State{}
	t.Cleanup(func() { st.Close() })
	fsys, err := fslocal.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	rec := &records{}
	_, err = tools.LoadState(st, recordsKey{}, func() *records { return rec })
	require.NoError(t, err)
	return &tools.Env{SessionID: "s1", Cwd: root, FS: fsys, State: st, Output: newDirStore(t), Record: rec.Record}
}

type recordsKey struct{}

// recordsOf returns what testEnv's Env recorded.
func recordsOf(t testing.TB, env *tools.Env) *records {
	t.Helper()
	rec, err := tools.LoadState(env.State, recordsKey{}, func() *records { return nil })
	require.NoError(t, err)
	require.NotNil(t, rec, "the Env is testEnv's")
	return rec
}

var callSeq struct {
	mu sync.Mutex
	n  int
}

// run runs tool with args as the dispatcher would, and returns the
// normalized result.
func run(t testing.TB, ctx context.Context, tool tools.Tool, env *tools.Env, args any) *harness.ToolResult {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	callSeq.mu.Lock()
	callSeq.n++
	id := fmt.Sprintf("call%d", callSeq.n)
	callSeq.mu.Unlock()
	call := &tools.Call{ID: id, Name: tool.Spec().Name, Arguments: string(raw), Spec: tool.Spec(), Env: env}
	res, err := tool.Execute(ctx, call)
	return toolexec.Normalize(call, res, err)
}

// named returns the tool called name.
func named(t testing.TB, ts []tools.Tool, name string) tools.Tool {
	t.Helper()
	for _, tl := range ts {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// sessionKit drives the persistent shell tools.
type sessionKit struct {
	t                       testing.TB
	env                     *tools.Env
	st                      *sessionTools
	open, send, read, close tools.Tool
}

func newKit(t testing.TB, env *tools.Env, opts ...Option) *sessionKit {
	st := &sessionTools{cfg: newConfig(opts), key: &sessionsKey{}}
	ts := []tools.Tool{st.openTool(), st.sendTool(), st.readTool(), st.closeTool()}
	_, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return &sessionKit{t: t, env: env, st: st, open: named(t, ts, "shell_open"), send: named(t, ts, "shell_send"),
		read: named(t, ts, "shell_read"), close: named(t, ts, "shell_close")}
}

// pending returns how many bytes of output shell id holds that no call
// has returned yet.
func (k *sessionKit) pending(id string) int64 {
	m, err := tools.LoadState(k.env.State, k.st.key, func() *shells { return nil })
	require.NoError(k.t, err)
	sh, err := m.get(id)
	require.NoError(k.t, err)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.window.Total()
}

var shellIDRE = regexp.MustCompile(`Opened shell (sh\d+)`)

// shellProc returns the running process of shell id.
func (k *sessionKit) shellProc(id string) *proctree.Proc {
	k.t.Helper()
	m, err := tools.LoadState(k.env.State, k.st.key, func() *shells { return nil })
	require.NoError(k.t, err)
	sh, err := m.get(id)
	require.NoError(k.t, err)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	require.NotNil(k.t, sh.p, "shell %s runs no process", id)
	return sh.p
}

// openShell opens a shell and returns its id and the pid of its bash
// (as the host sees it).
func (k *sessionKit) openShell(args map[string]any) (string, int) {
	k.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res := run(k.t, context.Background(), k.open, k.env, args)
	require.False(k.t, res.IsError, res.Text())
	require.Contains(k.t, res.Text(), "[containment: ")
	id := shellIDRE.FindStringSubmatch(res.Text())
	require.NotNil(k.t, id, res.Text())
	pid := k.shellProc(id[1]).Main()
	remember(pid)
	return id[1], pid
}

func (k *sessionKit) do(id, command string, waitMS ...int) *harness.ToolResult {
	k.t.Helper()
	args := map[string]any{"session_id": id, "command": command}
	if len(waitMS) > 0 {
		args["wait_ms"] = waitMS[0]
	}
	return run(k.t, context.Background(), k.send, k.env, args)
}

func (k *sessionKit) readOut(id string, waitMS ...int) *harness.ToolResult {
	k.t.Helper()
	args := map[string]any{"session_id": id}
	if len(waitMS) > 0 {
		args["wait_ms"] = waitMS[0]
	}
	return run(k.t, context.Background(), k.read, k.env, args)
}

// eventually polls cond until it holds, failing after a generous limit.
// It waits for a condition; it asserts nothing about how long it took.
func eventually(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// requireGone fails unless none of pids runs any more.
func requireGone(t testing.TB, pids ...int) {
	t.Helper()
	for _, p := range pids {
		if !pidAlive(p) {
			continue
		}
		if was, ok := started.Load(p); ok && was != startTime(p) {
			continue // the pid was reused by another process
		}
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		t.Fatalf("process %d still runs: %s (%q)", p, stat, cmd)
	}
}

// pidAlive reports whether pid runs and is not a zombie.
func pidAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// newTag returns a tag no other test uses, a sleep duration such as
// 1000.123456789, and a line of bash that sets T to it without writing
// the tag itself, so that a shell running the line does not carry the
// tag in its own command line.
func newTag(t testing.TB) (tag string, setT string) {
	n, err := rand.Int(rand.Reader, big.NewInt(900000000))
	require.NoError(t, err)
	v := n.Int64() + 100000000
	hi, lo := v/1000*1000, v%1000
	return fmt.Sprintf("1000.%d", v), fmt.Sprintf("T=1000.$((%d+%d))", hi, lo)
}

// sleepTag returns a tag to use as a sleep duration in a command line,
// and kills, at the end of the test, whatever still runs with it.
func sleepTag(t testing.TB) string {
	tag, _ := newTag(t)
	t.Cleanup(func() { killTagged(tag) })
	return tag
}

// tagged lists the live processes (pid: command line) whose argv holds
// tag.
func tagged(tag string) map[int]string {
	out := map[int]string{}
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil || !bytes.Contains(b, []byte(tag)) {
			continue
		}
		pid, _ := strconv.Atoi(strings.Split(n, "/")[2])
		if !pidAlive(pid) {
			continue
		}
		out[pid] = strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
	}
	return out
}

// requireTagged waits until a process with tag runs.
func requireTagged(t testing.TB, tag string) {
	t.Helper()
	eventually(t, func() bool { return len(tagged(tag)) > 0 }, "a process with "+tag)
}

// requireNoTagged fails unless no process with tag is left, polling a
// little for SIGKILLed processes to go. Survivors are killed, so a
// failing test leaves nothing behind.
func requireNoTagged(t testing.TB, tag string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := tagged(tag)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var lines []string
			for pid, cmd := range left {
				lines = append(lines, fmt.Sprintf("pid %d: %s", pid, cmd))
				_ = killPID(pid)
			}
			sort.Strings(lines)
			t.Fatalf("processes survived the stop:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killPID sends SIGKILL to one process.
func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// killTagged ends, by pid, every process left with tag (test cleanup).
func killTagged(tag string) {
	for pid := range tagged(tag) {
		_ = killPID(pid)
	}
}

// started maps pids seen by the tests to their start times (Linux).
var started sync.Map

func remember(pid int) {
	if st := startTime(pid); st != "" {
		started.LoadOrStore(pid, st)
	}
}

// startTime returns the start time of pid from /proc, or "".
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22 of stat: starttime
}

// lastLine returns the last line of s.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
