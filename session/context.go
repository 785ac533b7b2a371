package session

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/go-harness/harness"
)

// The types of the events of project context and hooks.
const (
	typeContext = "context" // ContextLoaded
	typeHook    = "hook"    // HookRun
)

// ContextFile is one part of a session's project context: an
// instruction file (AGENTS.md, CLAUDE.md), or text a host generates,
// such as the list of skills. Its Text is what the model reads of it,
// kept whole in the log, so that a resumed session or a replay rebuilds
// the same request from the log and never from the disk.
type ContextFile struct {
	// Path names where the text came from: a path in the file system's
	// namespace, an OS path for a user-level file, or a name such as
	// "skills" for generated text.
	Path string `json:"path"`
	// Kind says what the part is: "instructions", "skills", or a host's
	// own word.
	Kind string `json:"kind,omitempty"`
	// Digest is "sha256:" and the hex digest of Text (see DigestText).
	Digest string `json:"digest"`
	// Bytes is the size of the source as read, imports included; Text is
	// shorter when Cut is set.
	Bytes int64 `json:"bytes"`
	// Cut reports that the source was cut to a size cap; Text then ends
	// with a notice that says so.
	Cut bool `json:"cut,omitempty"`
	// Text is what the model reads: the source with a line naming it.
	Text string `json:"text"`
}

// ContextLoaded records project context. Without Nested it is the whole
// set of the stable prefix from this point on: the model reads it after
// the system prompt, in this order, until another ContextLoaded replaces
// it (a file changed between turns). With Nested it announces files
// found while a turn ran (an AGENTS.md below the working directory, in a
// directory the agent went into): they reach the model once, as a
// message at this point of the history, and are not sent again.
type ContextLoaded struct {
	Files  []ContextFile `json:"files"`
	Nested bool          `json:"nested,omitempty"`
	// Step is the step after whose results nested files were announced.
	Step int `json:"step,omitempty"`
}

// HookRun records one run of a hook a host configured (a command of a
// settings file, say): what ran for which event, how it ended and what
// it decided.
type HookRun struct {
	// Event is the hook event, as the settings name it (PreToolUse,
	// Stop, ...).
	Event string `json:"event"`
	// Matcher is the matcher the hook was found under, if any.
	Matcher string `json:"matcher,omitempty"`
	// Command is the command line run.
	Command string `json:"command"`
	// Source names the settings file the hook came from.
	Source string `json:"source,omitempty"`
	// Tool and CallID name the tool call a tool event was for.
	Tool   string `json:"tool,omitempty"`
	CallID string `json:"call_id,omitempty"`
	// ExitCode is the command's exit status; nil when it did not exit
	// by itself (killed, timed out, not started).
	ExitCode *int `json:"exit_code,omitempty"`
	// Signal names the signal that ended it, if one did.
	Signal string `json:"signal,omitempty"`
	// TimedOut reports that the command ran past its timeout and was
	// stopped.
	TimedOut bool `json:"timed_out,omitempty"`
	// Decision is what the run decided: "allow", "deny", "ask",
	// "block", "continue", "stop", "context", or "" for nothing.
	Decision string `json:"decision,omitempty"`
	// Reason is the text that went with the decision (to the model or
	// the user).
	Reason string `json:"reason,omitempty"`
	// UpdatedInput is the tool input the hook asked for instead of the
	// model's.
	UpdatedInput string `json:"updated_input,omitempty"`
	// Error says what went wrong running the hook or reading its output
	// (a non-blocking error, invalid JSON, output over the cap).
	Error string `json:"error,omitempty"`
	// DurationMS is how long the command ran.
	DurationMS int64 `json:"duration_ms"`
}

func (*ContextLoaded) eventType() string { return typeContext }
func (*HookRun) eventType() string       { return typeHook }

// DigestText returns "sha256:" and the hex SHA-256 digest of text, the
// Digest of a ContextFile.
func DigestText(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RenderContext returns the text the model reads for files: their
// texts in order, separated by a blank line. The loop puts it after the
// system prompt; the history uses it for nested files.
func RenderContext(files []ContextFile) string {
	var b strings.Builder
	for i, f := range files {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(f.Text)
	}
	return b.String()
}

// announced is a message of nested context files in the history.
type announced struct {
	index int // of the message in History.msgs
	files []ContextFile
}

// addContext applies a ContextLoaded.
func (h *History) addContext(p *ContextLoaded) {
	if !p.Nested {
		h.context = p.Files
		return
	}
	if len(p.Files) == 0 {
		return
	}
	h.announced = append(h.announced, announced{index: len(h.msgs), files: p.Files})
	h.msgs = append(h.msgs, harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(reminderText(RenderContext(p.Files)))}})
}

// compactContext forgets the announcements a compaction of the first n
// messages replaced, and moves the others with their messages.
func (h *History) compactContext(n int) {
	kept := h.announced[:0]
	for _, a := range h.announced {
		if a.index >= n {
			a.index -= n - 1
			kept = append(kept, a)
		}
	}
	h.announced = kept
}

// Context returns the project context of the stable prefix: the files of
// the last ContextLoaded without Nested, or nil.
func (h *History) Context() []ContextFile { return h.context }

// Announced returns the nested context files whose announcement is
// still in the history, oldest first: a compaction that summarized an
// announcement forgets it, so it is announced again when needed.
func (h *History) Announced() []ContextFile {
	var out []ContextFile
	for _, a := range h.announced {
		out = append(out, a.files...)
	}
	return out
}
