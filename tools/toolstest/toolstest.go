package toolstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

// root is the root of an Env's file system, and its working directory:
// a test names it as env.FS.Root() or env.Env.Cwd.
const root = "/project"

// Env is a tool environment for one test. Env.Env is what a tool sees;
// the other fields are the same in-memory parts, typed, so the test can
// arrange files and inspect what a tool saved. Replace any field of
// Env.Env (FS, Output, Attachments, Record, ModelInput, ...) to test a
// tool against something else.
type Env struct {
	// Env is the environment handed to the tool, with SessionID "test",
	// Cwd "/project" (the root of FS), Turn 1 and a State that Close closes.
	Env *tools.Env
	// FS is Env.FS: an in-memory file system rooted at "/project"
	// (FS.Root()), the working directory.
	FS fstest.MemFS
	// Output is Env.Output: an in-memory output store (spill).
	Output spill.Store
	// Attachments is Env.Attachments: an in-memory attachment store.
	Attachments *attachments.Store

	logs  *logBuffer
	calls atomic.Int64
}

// NewEnv returns an Env whose parts are empty. Close it when the test
// ends (defer env.Close()), which closes what tools kept in its State,
// such as shells.
func NewEnv() *Env {
	// A store without options cannot fail to build.
	out, _ := spill.NewMemory(spill.StoreConfig{})
	logs := &logBuffer{}
	e := &Env{
		FS:          fstest.NewMemFS(root),
		Output:      out,
		Attachments: attachments.NewMemory(),
		logs:        logs,
	}
	e.Env = &tools.Env{
		SessionID:   "test",
		Cwd:         root,
		FS:          e.FS,
		ModelInput:  []harness.Modality{harness.ModalityText},
		Turn:        1,
		State:       &tools.State{},
		Output:      e.Output,
		Attachments: e.Attachments,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{
			Level:       slog.LevelDebug,
			ReplaceAttr: dropTime,
		})),
	}
	return e
}

// Close closes the State of Env.Env, and so every value a tool kept in
// it, newest first, and returns their errors joined. Later calls that
// need the State fail with harness.CodeClosed.
func (e *Env) Close() error { return e.Env.State.Close() }

// Call runs tool once with args, as the loop dispatches a call, and
// returns its result. args is the JSON the model sends: a string,
// []byte or json.RawMessage is taken as it is (so that malformed
// arguments can be tested), anything else is encoded with encoding/json.
// Arguments the tool's schema refuses give the error result the model
// would see, and so do an error the tool returns and a panic. The error
// is for a broken test: a tool the registry refuses (a bad spec, or an
// invalid option its Validate reports) or arguments that do not encode.
func (e *Env) Call(ctx context.Context, tool tools.Tool, args any) (*harness.ToolResult, error) {
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case []byte:
		raw = json.RawMessage(a)
	case json.RawMessage:
		raw = a
	default:
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("toolstest: encoding the arguments: %w", err)
		}
		raw = b
	}
	reg, err := tools.NewRegistry(tool)
	if err != nil {
		return nil, err
	}
	n := e.calls.Add(1)
	call := &tools.Call{
		ID:        fmt.Sprintf("call_%d", n),
		Name:      tool.Spec().Name,
		Arguments: string(raw),
		Step:      1,
		Env:       e.Env,
	}
	if res := reg.Check(call); res != nil {
		return res, nil
	}
	return toolexec.Executor()(ctx, call), nil
}

// Logs returns what tools logged through Env.Logger so far, one record a
// line in slog's text format without the time ("level=WARN msg=...").
func (e *Env) Logs() string { return e.logs.String() }

// logBuffer is an io.Writer safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
