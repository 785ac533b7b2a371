package harness

// The codes of the module, by area. A code's text is public API: it is
// logged, shown to the model and matched by programs, so it never changes
// meaning once shipped. Codes of different areas with the same meaning
// are one code (CodeAborted, CodeTooLarge, CodeNotFound, ...).
//
// Every code a host, a tool author or an implementer of a contract (a
// FileSystem, a Model adapter, a store) reports or acts on has a constant
// here. A code that only one package reports has its constant in that
// package, documented there: agent (CodeNothingPending, CodeCallChanged,
// CodeInternal), tools (CodeInvalidSchema), and the built-in tools'
// packages for the codes only one tool reports (tools/shell,
// tools/images, tools/sessiontools, tools/mcp). No caller spells a code
// by hand: match one with errors.Is(err, agent.CodeNothingPending) or
// compare it with CodeOf(err).

// Dispatch: what the loop and the tool registry report about a call.
const (
	// CodeUnknownTool: the model called a tool that is not registered.
	CodeUnknownTool Code = "unknown_tool"
	// CodeInvalidArguments: the arguments are not JSON, not an object, or
	// do not match the tool's schema; or a tool refused a value.
	CodeInvalidArguments Code = "invalid_arguments"
	// CodeToolPanic: the tool panicked; a fault in the tool.
	CodeToolPanic Code = "tool_panic"
	// CodeToolFailed: the tool failed without a more specific code (for
	// read_image: scaling or re-encoding a valid image failed).
	CodeToolFailed Code = "tool_failed"
	// CodeTimeout: a deadline passed (context.DeadlineExceeded maps
	// here everywhere).
	CodeTimeout Code = "timeout"
	// CodeAborted: the work was cancelled before it finished
	// (context.Canceled maps here everywhere).
	CodeAborted Code = "aborted"
	// CodeNotRun: the session stopped before the call started.
	CodeNotRun Code = "not_run"
	// CodeOutcomeUnknown: the session stopped while the call ran.
	CodeOutcomeUnknown Code = "outcome_unknown"
	// CodeDenied: the call was not run because a permission rule, the
	// permission mode or the user denied it.
	CodeDenied Code = "denied"
)

// File system: what a FileSystem operation reports.
const (
	// CodeNotFound: the file, session, output, attachment, persistent
	// shell or background job does not exist (for files: or a parent
	// directory does not).
	CodeNotFound Code = "not_found"
	// CodeNotDir: a path component that must be a directory is not one.
	CodeNotDir Code = "not_a_directory"
	// CodeNotText: the file is not UTF-8 text (a NUL byte or invalid
	// UTF-8).
	CodeNotText Code = "not_text"
	// CodeNotRegular: the path names a directory, device, pipe or socket
	// where a regular file is needed.
	CodeNotRegular Code = "not_regular_file"
	// CodeTooLarge: a file, an image (its file, its declared pixels or
	// longest side, or the memory its decoding needs) or a log event is
	// larger than the operation allows.
	CodeTooLarge Code = "too_large"
	// CodePermission: the operating system or the file system refused
	// access.
	CodePermission Code = "permission_denied"
	// CodeOutsideRoot: the path, or a symbolic link on it, leads outside
	// the file system's root.
	CodeOutsideRoot Code = "outside_root"
	// CodeInvalidPath: the path is malformed: relative, empty, containing
	// a NUL byte, too long, or looping through symbolic links.
	CodeInvalidPath Code = "invalid_path"
	// CodeExists: a create-only write found the file already there, or a
	// store already holds a session with that id.
	CodeExists Code = "already_exists"
	// CodeStale: the file changed (or disappeared) since the version the
	// caller expected.
	CodeStale Code = "stale_version"
	// CodeNotObserved: the caller has not seen the file, so it may not
	// change it.
	CodeNotObserved Code = "not_observed"
	// CodeEditNotFound: the text to replace does not occur in the file.
	CodeEditNotFound Code = "edit_not_found"
	// CodeAmbiguousEdit: the text to replace occurs more than once and
	// the edit asked for exactly one replacement.
	CodeAmbiguousEdit Code = "ambiguous_edit"
	// CodeInvalidEdit: the edit itself is malformed (empty old text, or
	// old and new text equal).
	CodeInvalidEdit Code = "invalid_edit"
	// CodePastEnd: a text window starts after the last line.
	CodePastEnd Code = "offset_past_end"
	// CodeIO: any other failure of the underlying storage.
	CodeIO Code = "io_error"
)

// Model: what a model call reports.
const (
	// CodeAuth: the key is missing, wrong or lacks access (401, 403).
	CodeAuth Code = "auth"
	// CodeInsufficientBalance: the account has no credit left (402).
	CodeInsufficientBalance Code = "insufficient_balance"
	// CodeInvalidRequest: the provider refused the request (400, 422).
	CodeInvalidRequest Code = "invalid_request"
	// CodeContextWindowExceeded: the request is larger than the model's
	// context window.
	CodeContextWindowExceeded Code = "context_window_exceeded"
	// CodeRateLimit: too many requests (429); the provider may say when
	// to try again.
	CodeRateLimit Code = "rate_limit"
	// CodeServer: the provider failed (5xx) or is overloaded.
	CodeServer Code = "server"
	// CodeTransport: the connection failed or stalled.
	CodeTransport Code = "transport"
	// CodeEmptyResponse: the answer had no text and no tool calls.
	CodeEmptyResponse Code = "empty_response"
	// CodeTruncatedStream: the stream ended without a finish reason.
	CodeTruncatedStream Code = "truncated_stream"
	// CodeContentFilter: the provider withheld the answer.
	CodeContentFilter Code = "content_filter"
)

// Stores: what session logs, attachment stores and output stores report.
const (
	// CodeClosed: the log, store, writer or session state is closed.
	CodeClosed Code = "closed"
	// CodeLocked: the session log is open for appending elsewhere.
	CodeLocked Code = "locked"
	// CodeInvalidID: a session id is not one a store accepts.
	CodeInvalidID Code = "invalid_id"
	// CodeInvalidQuery: a session search query is malformed.
	CodeInvalidQuery Code = "invalid_query"
	// CodeInvalidDigest: an attachment digest is not "sha256:" and 64
	// lowercase hex digits.
	CodeInvalidDigest Code = "invalid_digest"
	// CodeCorruptAttachment: stored attachment bytes do not match their
	// digest.
	CodeCorruptAttachment Code = "corrupt_attachment"
	// CodeSpillBudget: saving the output would take its session past the
	// output store's byte budget.
	CodeSpillBudget Code = "spill_budget"
	// CodeUnsupportedFormat: the session log is written in a format this
	// build cannot read (a newer one, say).
	CodeUnsupportedFormat Code = "unsupported_format"
	// CodeInvalidOutput: a structured final answer did not validate
	// against its schema, even after one repair round trip; or the
	// schema itself does not resolve.
	CodeInvalidOutput Code = "invalid_output"
)

// Shell: what the shell tools report.
const (
	// CodeSandboxUnavailable: the sandbox cannot run here (bubblewrap
	// is missing or cannot create namespaces).
	CodeSandboxUnavailable Code = "sandbox_unavailable"
)

// The loop and everything else.
const (
	// CodeBusy: a turn is already running in the session, or the
	// persistent shell is still running an earlier command.
	CodeBusy Code = "busy"
	// CodeInvalidOption: an option value is out of range.
	CodeInvalidOption Code = "invalid_option"
	// CodeNotStopped: a running turn did not stop within the time Close
	// waits for it, or processes a tool started survived being stopped.
	CodeNotStopped Code = "not_stopped"
	// CodeReplayDrift: a replayed session's live request differs from
	// the one recorded.
	CodeReplayDrift Code = "replay_drift"
	// CodeConflict: a rewind would overwrite work done outside the agent
	// since its checkpoint (a file the user changed), so it was refused.
	CodeConflict Code = "conflict"
	// CodeUnknown: a failure with no code of its own.
	CodeUnknown Code = "unknown"
)
