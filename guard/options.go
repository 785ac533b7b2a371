package guard

import (
	"time"

	"github.com/go-harness/harness/tools"
)

// Each constructor takes its own Config struct, whose zero value is the
// default: a knob of one guard cannot be handed to another. A zero field
// keeps its default; an invalid value is an error of the constructor
// (harness.CodeInvalidOption), never clamped or ignored.

// RepeatConfig configures [RepeatGuard].
type RepeatConfig struct {
	// Thresholds are the run lengths that trigger a reminder, in any
	// order (3, 5 and 8 when nil). Each is at least 2, and a non-nil
	// list has at least one: anything else is an error.
	Thresholds []int
	// Exclude, when non-nil, replaces the default list of tools the
	// guard ignores (todo, todo_read, todo_write, ask_user and
	// ask_user_question): their calls neither count nor break a run. An
	// empty, non-nil list excludes nothing.
	Exclude []string
}

// FailureConfig configures [FailureGuard].
type FailureConfig struct {
	// Streak is how many failures of one tool in a row trigger a
	// reminder (3 when zero). Fewer than 2 is an error.
	Streak int
	// Exclude names tools the guard ignores (none by default): their
	// calls neither count nor break a streak.
	Exclude []string
}

// DeadlineConfig configures [Deadlines].
type DeadlineConfig struct {
	// Families sets the backstop of the tools of a family that declare
	// no deadline; the "" key is the tools that declare no family, or one
	// not listed. A zero duration means no backstop for them; a negative
	// one is an error.
	Families map[tools.Family]time.Duration
	// Tools sets the backstop of single tools by name, whatever they
	// declare. A zero duration means no backstop for the tool; a
	// negative one is an error.
	Tools map[string]time.Duration
	// Grace is the least margin a backstop leaves beyond a tool's
	// declared deadline (30 s when zero). A negative margin is an error.
	Grace time.Duration
	// CancelWait is how long a cancelled call may take to return its own
	// result before it is abandoned (1 s when zero). A negative wait is an
	// error.
	CancelWait time.Duration
}

// excludedSet returns names as a set.
func excludedSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
