package shelltest

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
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// DirStore is an OutputStore double that saves to files in a directory.
type DirStore struct {
	dir string
	mu  sync.Mutex
	n   int
	// owners records who saved what.
	owners []tools.Owner
}

// NewDirStore returns a DirStore in a fresh directory.
func NewDirStore(t testing.TB) *DirStore { return &DirStore{dir: t.TempDir()} }

func (s *DirStore) Save(ctx context.Context, o tools.Owner, r io.Reader) (tools.Stored, error) {
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

func (s *DirStore) Open(ctx context.Context, loc string) (io.ReadCloser, error) {
	name, ok := strings.CutPrefix(loc, tools.OutputScheme)
	if !ok || strings.ContainsAny(name, "/\\") {
		return nil, os.ErrNotExist
	}
	return os.Open(filepath.Join(s.dir, name))
}

// Read returns what was saved as loc.
func (s *DirStore) Read(t testing.TB, loc string) string {
	t.Helper()
	rc, err := s.Open(context.Background(), loc)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return string(b)
}

// CountStore is an OutputStore double that keeps only the size and the
// SHA-256 of what it is given, for outputs too big for a temp dir.
type CountStore struct {
	mu    sync.Mutex
	saved map[string]CountRec
	n     int
}

// CountRec is what a CountStore keeps of a stream: its size and SHA-256.
type CountRec struct {
	Size int64
	Sum  string
}

func (s *CountStore) Save(ctx context.Context, o tools.Owner, r io.Reader) (tools.Stored, error) {
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
		s.saved = map[string]CountRec{}
	}
	s.saved[loc] = CountRec{n, hex.EncodeToString(h.Sum(nil))}
	return tools.Stored{Locator: loc, Size: n}, nil
}

func (s *CountStore) Open(ctx context.Context, loc string) (io.ReadCloser, error) {
	return nil, os.ErrNotExist
}

// Get returns what was saved as loc.
func (s *CountStore) Get(loc string) (CountRec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.saved[loc]
	return r, ok
}

// Records is a session log double for Env.Record; RecordsOf finds an
// Env's.
type Records struct {
	mu   sync.Mutex
	recs []Record
}

// Record is one record of the log.
type Record struct {
	Tool, Name string
	Data       json.RawMessage
}

// Record appends a record, as Env.Record.
func (r *Records) Record(ctx context.Context, call *tools.Call, name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, Record{call.Name, name, b})
	return nil
}

// All returns the records so far.
func (r *Records) All() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.recs...)
}

// Env returns an Env rooted at a fresh directory, whose State is
// closed when the test ends.
func Env(t testing.TB) *tools.Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	st := &tools.State{}
	t.Cleanup(func() { st.Close() })
	fsys, err := fslocal.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	rec := &Records{}
	_, err = tools.LoadState(st, recordsKey{}, func() *Records { return rec })
	require.NoError(t, err)
	return &tools.Env{SessionID: "s1", Cwd: root, FS: fsys, State: st, Output: NewDirStore(t), Record: rec.Record}
}

type recordsKey struct{}

// RecordsOf returns what Env's Env recorded.
func RecordsOf(t testing.TB, env *tools.Env) *Records {
	t.Helper()
	rec, err := tools.LoadState(env.State, recordsKey{}, func() *Records { return nil })
	require.NoError(t, err)
	require.NotNil(t, rec, "the Env is shelltest.Env's")
	return rec
}

// callSeq numbers the calls Run makes.
var callSeq struct {
	mu sync.Mutex
	n  int
}

// Run runs tool with args as the dispatcher would, and returns the
// normalized result.
func Run(t testing.TB, ctx context.Context, tool tools.Tool, env *tools.Env, args any) *harness.ToolResult {
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

// Named returns the tool called name.
func Named(t testing.TB, ts []tools.Tool, name string) tools.Tool {
	t.Helper()
	for _, tl := range ts {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// Eventually polls cond until it holds, failing after a generous limit.
// It waits for a condition; it asserts nothing about how long it took.
func Eventually(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RequireGone fails unless none of pids runs any more.
func RequireGone(t testing.TB, pids ...int) {
	t.Helper()
	for _, p := range pids {
		if !PidAlive(p) {
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

// PidAlive reports whether pid runs and is not a zombie.
func PidAlive(pid int) bool {
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

// NewTag returns a tag no other test uses, a sleep duration such as
// 1000.123456789, and a line of bash that sets T to it without writing
// the tag itself, so that a shell running the line does not carry the
// tag in its own command line.
func NewTag(t testing.TB) (tag string, setT string) {
	n, err := rand.Int(rand.Reader, big.NewInt(900000000))
	require.NoError(t, err)
	v := n.Int64() + 100000000
	hi, lo := v/1000*1000, v%1000
	return fmt.Sprintf("1000.%d", v), fmt.Sprintf("T=1000.$((%d+%d))", hi, lo)
}

// SleepTag returns a tag to use as a sleep duration in a command line,
// and kills, at the end of the test, whatever still runs with it.
func SleepTag(t testing.TB) string {
	tag, _ := NewTag(t)
	t.Cleanup(func() { KillTagged(tag) })
	return tag
}

// Tagged lists the live processes (pid: command line) whose argv holds
// tag.
func Tagged(tag string) map[int]string {
	out := map[int]string{}
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil || !bytes.Contains(b, []byte(tag)) {
			continue
		}
		pid, _ := strconv.Atoi(strings.Split(n, "/")[2])
		if !PidAlive(pid) {
			continue
		}
		out[pid] = strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
	}
	return out
}

// RequireTagged waits until a process with tag runs.
func RequireTagged(t testing.TB, tag string) {
	t.Helper()
	Eventually(t, func() bool { return len(Tagged(tag)) > 0 }, "a process with "+tag)
}

// RequireNoTagged fails unless no process with tag is left, polling
// for SIGKILLed processes to go (a loaded machine may take seconds to
// run their exit). Survivors are killed, so a failing test leaves
// nothing behind.
func RequireNoTagged(t testing.TB, tag string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := Tagged(tag)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var lines []string
			for pid, cmd := range left {
				lines = append(lines, fmt.Sprintf("pid %d: %s", pid, cmd))
				_ = KillPID(pid)
			}
			sort.Strings(lines)
			t.Fatalf("processes survived the stop:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// KillPID sends SIGKILL to one process.
func KillPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// KillTagged ends, by pid, every process left with tag (test cleanup).
func KillTagged(tag string) {
	for pid := range Tagged(tag) {
		_ = KillPID(pid)
	}
}

// started maps pids seen by the tests to their start times (Linux).
var started sync.Map

// Remember notes the start time of pid, so that RequireGone knows a
// reused pid.
func Remember(pid int) {
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

// LastLine returns the last line of s.
func LastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// Owners returns who saved what, in order.
func (s *DirStore) Owners() []tools.Owner {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tools.Owner(nil), s.owners...)
}

// EnvSandbox is a Sandbox double that marks the processes it wraps with
// SANDBOXED=yes, or refuses them when Deny is set. Dir is the directory
// of the last command it wrapped.
type EnvSandbox struct {
	Deny bool
	Dir  string
}

// Wrap prefixes argv with env SANDBOXED=yes.
func (s *EnvSandbox) Wrap(argv []string, dir string) ([]string, error) {
	if s.Deny {
		return nil, fmt.Errorf("not allowed here")
	}
	s.Dir = dir
	return append([]string{"env", "SANDBOXED=yes"}, argv...), nil
}

// Describe says "env marker".
func (s *EnvSandbox) Describe() string { return "env marker" }

// HeapPeak samples the heap until the returned function is called, which
// returns the largest HeapInuse seen.
func HeapPeak(t testing.TB) func() uint64 {
	runtime.GC()
	stop := make(chan struct{})
	result := make(chan uint64)
	go func() {
		var ms runtime.MemStats
		var peak uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		return <-result
	}
}

// BashPath returns the path of bash, or skips the benchmark without it.
func BashPath(b *testing.B) string {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash is not installed")
	}
	return bash
}

// NewCall builds a call the way the dispatcher does.
func NewCall(b *testing.B, t tools.Tool, env *tools.Env, args any) *tools.Call {
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	return &tools.Call{ID: "bench", Name: t.Spec().Name, Arguments: string(raw), Spec: t.Spec(), Env: env}
}

// MustRun executes c and fails unless the result holds want.
func MustRun(b *testing.B, t tools.Tool, c *tools.Call, want string) {
	res, err := t.Execute(context.Background(), c)
	if err != nil || res.IsError || !strings.Contains(res.Text(), want) {
		b.Fatalf("unexpected result: %v %s", err, res.Text())
	}
}
