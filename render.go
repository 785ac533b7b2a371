package harness

// RenderKind names how a host should present a call.
type RenderKind string

// Render intents.
const (
	RenderGeneric   RenderKind = "generic"
	RenderTerminal  RenderKind = "terminal"
	RenderDiff      RenderKind = "diff"
	RenderLocations RenderKind = "locations"
	// RenderQuestions is a card of questions to the user, each with its
	// choices, and once answered the answers (the ask_user tool).
	RenderQuestions RenderKind = "questions"
	// RenderTodo is the model's plan as a short checklist (the todo
	// tool), shown in place of the previous one.
	RenderTodo RenderKind = "todo"
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
	// Questions are the questions of a questions card; Answers, once
	// given, one per question in order.
	Questions []Question `json:"questions,omitempty"`
	Answers   []string   `json:"answers,omitempty"`
	// Todo is the plan of a todo card, in order.
	Todo []TodoItem `json:"todo,omitempty"`
}

// Question is one question the model asks the user (the ask_user tool's
// "questions" items): free text, or a pick among choices.
type Question struct {
	// Question is the question, complete and specific.
	Question string `json:"question"`
	// Choices are the answers to pick from; none means a free-text
	// answer. The user may still answer something else.
	Choices []string `json:"choices,omitempty"`
	// Multiple says several choices may be picked.
	Multiple bool `json:"multiple,omitempty"`
}

// TodoItem is one item of the model's plan (the todo tool's "items").
type TodoItem struct {
	// Content says what is to be done, in the imperative.
	Content string `json:"content"`
	// Status is TodoPending, TodoInProgress or TodoDone.
	Status string `json:"status"`
}

// The statuses of a TodoItem.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoDone       = "done"
)

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
