package tools

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
)

// Tool is a capability the model can call.
//
// Execute runs one call. A returned error becomes an error result whose
// code comes from harness.CodeOf (harness.CodeToolFailed when the error
// has none) and whose text is the error's; return a *harness.Error to
// choose both. A tool that wants to shape the model-facing text of a
// failure may also return a result with IsError set instead. Execute
// must honour ctx: the dispatcher cancels it on timeout and when the turn
// is cancelled.
type Tool interface {
	Spec() Spec
	Execute(ctx context.Context, call *Call) (*harness.ToolResult, error)
}

// Spec describes a tool to the model and to the dispatcher.
type Spec struct {
	// Name is the model-facing name: snake_case, unique in a registry.
	// The tools of an MCP server (package tools/mcp) are named
	// mcp__<server>__<tool> in the server's spelling: letters, digits,
	// '_' and '-', at most 64 characters.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description"`
	// InputSchema is the JSON Schema (an object schema) of the arguments.
	// Define fills it from the argument struct. The bytes are sent as they
	// are, so keep them stable: providers cache request prefixes.
	InputSchema json.RawMessage `json:"input_schema"`

	// ConcurrencySafe reports that calls may run in parallel with other
	// concurrency-safe calls of the same step. Any other call is a barrier
	// that runs alone, in order.
	ConcurrencySafe bool `json:"concurrency_safe,omitempty"`
	// SideEffects reports that a call may change state outside the
	// conversation (files, processes, the network). A call with side
	// effects that is cut off says its side effects are unknown.
	SideEffects bool `json:"side_effects,omitempty"`
	// Deadline is the longest one call is expected to run, including any
	// timeout the tool enforces itself. Zero means the family default.
	Deadline time.Duration `json:"deadline,omitempty"`
	// Family groups tools for default deadlines.
	Family Family `json:"family,omitempty"`
	// Render is the render intent hosts should expect in results.
	Render harness.RenderKind `json:"render,omitempty"`
	// NeverSpill marks a tool whose results must never be replaced by a
	// spill preview, such as the tool that reads spilled output back.
	NeverSpill bool `json:"never_spill,omitempty"`
	// NeedsFS reports that the tool works in Env.FS and cannot work
	// without one (read, write, edit, glob, grep, read_image do):
	// agent.New refuses the tool when the loop has no file system
	// (agent.Stores.Files), instead of the model learning it call by call.
	NeedsFS bool `json:"needs_fs,omitempty"`
	// NeedsOSDir reports that the tool runs programs in a directory of
	// the operating system (bash, shell_open do): a file system that is
	// not backed by the OS (one that is not an fs.LocalPather, such as
	// fs/fstest's MemFS) has no directory to give it, and agent.New
	// refuses the tool with such a file system. Without any file system
	// it runs in the session's working directory.
	NeedsOSDir bool `json:"needs_os_dir,omitempty"`
}

// Family groups tools whose calls take similar time, so a dispatcher can
// give them a default deadline.
type Family string

// Tool families.
const (
	// FamilyLocal is for tools that touch only local state (files, memory):
	// they should finish quickly.
	FamilyLocal Family = "local"
	// FamilyProcess is for tools that run programs.
	FamilyProcess Family = "process"
	// FamilyNetwork is for tools that wait on remote services.
	FamilyNetwork Family = "network"
)

// Call is one tool call as the model made it, prepared for execution.
type Call struct {
	// ID is the provider's call id, unique within the session.
	ID string
	// Name is the tool name the model used.
	Name string
	// Arguments is the JSON text of the arguments exactly as the model
	// sent it (harness.ToolCall.Arguments), which may be malformed. Read
	// the decoded value with Args.
	Arguments string
	// Step is the 1-based step of the turn that made the call.
	Step int
	// Index is the call's position among the calls of its step.
	Index int
	// Spec is the resolved tool's spec; zero until the registry checks
	// the call.
	Spec Spec
	// Env is the session environment; never nil during dispatch.
	Env *Env
	// OnProgress, when set by the dispatcher, receives what the call
	// reports while it runs; nil when nobody listens, so check before
	// calling. It never blocks (the dispatcher coalesces pieces the host
	// has not taken yet) and is safe to call from any goroutine until
	// Execute returns; later calls are ignored.
	OnProgress func(Progress)

	tool Tool
	// args are the arguments as the registry decoded them.
	args map[string]any
}

// Progress is what a running call reports before its result: output as
// it arrives (a command's stdout and stderr), or a position and message
// (an MCP server's progress notification). It is shown to the host only:
// the model sees the result, and the session log does not keep it.
type Progress struct {
	// Output is output produced since the last report.
	Output string `json:"output,omitempty"`
	// Progress and Total are the progress so far and the total, when
	// known; Total is 0 when unknown.
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
	// Message describes the current state.
	Message string `json:"message,omitempty"`
}

// Tool returns the tool the registry resolved for the call, or nil.
func (c *Call) Tool() Tool { return c.tool }

// Env is what a tool can use of its session. The loop builds one per
// session and refreshes the model fields per step; tools must not modify
// it.
type Env struct {
	// SessionID identifies the agent session.
	SessionID string
	// Cwd is the session's working directory, an absolute slash-separated
	// path in the file system's namespace. Relative paths resolve
	// against it.
	Cwd string
	// FS is the session's file system, or nil when none is configured.
	FS fs.FileSystem
	// ModelInput lists the input modalities the current model declares,
	// by the rule of harness.Modality (text always, anything else when
	// listed): slices.Contains(ModelInput, harness.ModalityImage).
	ModelInput []harness.Modality
	// Turn counts the user messages of the session so far. It changes
	// exactly when a new user message arrives, which is when advisory
	// state such as repeated-call counters resets.
	Turn int
	// State holds per-session values that live until the session closes.
	State *State
	// Output stores large outputs whole (spill); nil when none is
	// configured.
	Output OutputStore
	// Attachments stores images content-addressed; nil when none is
	// configured.
	Attachments AttachmentStore
	// Logger receives diagnostics; never nil during dispatch.
	Logger *slog.Logger
	// Record, when set, appends a tool-specific record (name and data,
	// encoded as JSON) to the session log, so that what a tool fixed at
	// one point (a shell's environment, say) can be read back later. It
	// is nil when nothing records, so check before calling.
	Record func(ctx context.Context, call *Call, name string, data any) error
}

type ledgerKey struct{}

// Ledger returns the session's observation ledger: the version of every
// file the session's tools have shown the model or changed (read, write
// and edit, read_image). It lives in State, so it starts empty for every
// session, resumed ones included. It returns nil when e has no state or
// the session is closing.
func (e *Env) Ledger() *fs.Ledger {
	if e == nil || e.State == nil {
		return nil
	}
	l, err := LoadState(e.State, ledgerKey{}, func() *fs.Ledger { return new(fs.Ledger) })
	if err != nil {
		return nil
	}
	return l
}

// Resolve returns the absolute, clean namespace path a tool argument
// names: an absolute path cleaned, a relative one joined to the session's
// working directory (or, without one, to the file system's root).
func (e *Env) Resolve(p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	cwd := e.Cwd
	if cwd == "" {
		cwd = "/"
		if e.FS != nil {
			cwd = fsimpl.RootOf(e.FS)
		}
	}
	return path.Join(cwd, p)
}

// Owner names the producer of a stored output.
type Owner struct {
	Session string `json:"session"`
	Tool    string `json:"tool"`
	Call    string `json:"call"`
}

// OutputScheme starts every locator an OutputStore returns. The read
// tool opens paths that start with it through Env.Output, so a spilled
// output is readable with offset and limit even when the file system is
// confined to the workspace; nothing writes through it.
const OutputScheme = "spill://"

// Stored describes an output saved whole.
type Stored struct {
	// Locator is the path-like name, starting with OutputScheme, that
	// the read tool accepts to read the output back.
	Locator string `json:"locator"`
	// Size is the number of bytes saved.
	Size int64 `json:"size"`
}

// OutputStore saves tool output whole so that only a preview needs to
// reach the model. The spill package provides the implementations and
// the retention operations.
type OutputStore interface {
	// Save copies r to a new, private file owned by owner and returns its
	// locator. It reads r to the end unless ctx ends or writing fails.
	Save(ctx context.Context, owner Owner, r io.Reader) (Stored, error)
	// Open opens a saved output for reading. A locator that does not name
	// a saved output fails with an error matching harness.CodeNotFound.
	Open(ctx context.Context, locator string) (io.ReadCloser, error)
}

// AttachmentStore stores binary attachments (images) content-addressed,
// so the session log holds references and never the bytes.
type AttachmentStore interface {
	// Put stores data and returns its digest ("sha256:<hex>"). Storing
	// the same bytes twice stores them once.
	Put(ctx context.Context, data []byte) (digest string, err error)
	// Get returns the bytes stored under digest, verified against it.
	Get(ctx context.Context, digest string) ([]byte, error)
}
