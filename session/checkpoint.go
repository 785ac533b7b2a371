package session

import "time"

// typeCheckpoint is the type of a Checkpoint event.
const typeCheckpoint = "checkpoint"

// Checkpoint records the state of the session's workspace files at one
// point of the session (package checkpoint takes them): a manifest in
// the attachment store names every file, directory and link with its
// content digest, and the contents themselves are kept there too, so a
// rewind can bring the files back. The model never sees it.
type Checkpoint struct {
	// Kind says where the checkpoint was taken: CheckpointTurnStart,
	// CheckpointBeforeCall, CheckpointTurnEnd, CheckpointRewindStart or
	// CheckpointRewindEnd.
	Kind string `json:"kind"`
	// Turn is the number of turns (user messages) logged before it.
	Turn int `json:"turn"`
	// Step and Calls name, for CheckpointBeforeCall, the step and the
	// calls about to run.
	Step  int      `json:"step,omitempty"`
	Calls []string `json:"calls,omitempty"`
	// Dir is the workspace directory, an absolute OS path.
	Dir string `json:"dir"`
	// Manifest is the digest of the checkpoint's manifest in the
	// attachment store.
	Manifest string `json:"manifest"`
	// Scanned is when the scan of the workspace started; the stat cache
	// of a resumed session hashes again the files modified close to it.
	Scanned time.Time `json:"scanned"`
	// Files and Bytes count the files and their total size; Omitted the
	// files recorded by digest and size only (past the size limits).
	Files   int   `json:"files"`
	Bytes   int64 `json:"bytes"`
	Omitted int   `json:"omitted,omitempty"`
	// Added, Modified and Deleted count the entries changed since the
	// session's previous checkpoint, and Paths names the first of them.
	Added    int      `json:"added,omitempty"`
	Modified int      `json:"modified,omitempty"`
	Deleted  int      `json:"deleted,omitempty"`
	Paths    []string `json:"paths,omitempty"`
	// Target is, for the checkpoints of a rewind, the sequence number of
	// the checkpoint event it went back to.
	Target int64 `json:"target,omitempty"`
}

// Checkpoint kinds. A change between two consecutive checkpoints of a
// session is the agent's when the later one is CheckpointBeforeCall,
// CheckpointTurnEnd or CheckpointRewindEnd (the interval lies within a
// turn or a rewind), and someone else's (outside the agent) when it is
// CheckpointTurnStart or CheckpointRewindStart.
const (
	// CheckpointTurnStart is taken when a turn starts, before its user
	// message is logged (or before a paused turn continues).
	CheckpointTurnStart = "turn_start"
	// CheckpointBeforeCall is taken before tool calls that may change
	// files (tools.Spec.SideEffects) run.
	CheckpointBeforeCall = "before_call"
	// CheckpointTurnEnd is taken when a turn that ran such calls ends.
	CheckpointTurnEnd = "turn_end"
	// CheckpointRewindStart is taken by a rewind before it changes
	// anything: it keeps the files as they were.
	CheckpointRewindStart = "rewind_start"
	// CheckpointRewindEnd is taken by a rewind after it restored files.
	CheckpointRewindEnd = "rewind_end"
)

func (*Checkpoint) eventType() string { return typeCheckpoint }
