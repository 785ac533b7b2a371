package harness

// RenderKind names how a host should present a call.
type RenderKind string

// Render intents.
const (
	RenderGeneric   RenderKind = "generic"
	RenderTerminal  RenderKind = "terminal"
	RenderDiff      RenderKind = "diff"
	RenderLocations RenderKind = "locations"
)

// Render is plain data a host uses to present a call. It is a pure
// function of the call's arguments and result, and it is logged, so a host
// can render a replayed session exactly as it rendered the live one. Only
// the field matching Kind is set.
type Render struct {
	Kind RenderKind `json:"kind"`
	// Title is a one-line summary for any card ("read main.go").
	Title     string     `json:"title,omitempty"`
	Terminal  *Terminal  `json:"terminal,omitempty"`
	Diff      *Diff      `json:"diff,omitempty"`
	Locations []Location `json:"locations,omitempty"`
	// Text is the body of a generic card.
	Text string `json:"text,omitempty"`
}

// Terminal is a command and what it printed.
type Terminal struct {
	Command string `json:"command"`
	Cwd     string `json:"cwd,omitempty"`
	// Output is the end of the combined output, as much as a card shows.
	Output string `json:"output,omitempty"`
	// ExitCode is the process exit status; nil while running or when the
	// process was killed before it exited.
	ExitCode *int `json:"exit_code,omitempty"`
	// Status is "exited", "running", "timeout", "killed" or "cancelled".
	Status string `json:"status,omitempty"`
}

// Diff is a change to one file.
type Diff struct {
	Path string `json:"path"`
	// OldText is the text before the change; nil for a created file. Large
	// texts are left out (OldText nil, Hunks set, Truncated true).
	OldText *string `json:"old_text,omitempty"`
	// NewText is the text after the change, unless Truncated.
	NewText   string `json:"new_text,omitempty"`
	Hunks     []Hunk `json:"hunks,omitempty"`
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Hunk is one region of a unified diff.
type Hunk struct {
	OldStart int `json:"old_start"`
	OldLines int `json:"old_lines"`
	NewStart int `json:"new_start"`
	NewLines int `json:"new_lines"`
	// Lines each start with ' ', '-' or '+'.
	Lines []string `json:"lines"`
}

// Location is a file and an optional 1-based inclusive line range.
type Location struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line,omitempty"`
	EndLine   int    `json:"end_line,omitempty"`
}
