package guard

import (
	"errors"

	"github.com/go-harness/harness/internal/toolexec"
)

// Option configures one of the guards. Each WithX option belongs to the
// constructors its documentation names (WithRepeat* to RepeatGuard,
// WithFailure* to FailureGuard, WithExclude to both, the deadline options
// to Deadlines); passing it to another is an error
// (harness.CodeInvalidOption), like an invalid value.
type Option func(*settings)

// settings is what an Option applies to: the one guard being built.
type settings struct {
	ctor      string // the constructor the options were passed to
	repeat    *repeatGuard
	failure   *failureGuard
	deadlines *deadlines
	errs      []error
}

func apply(s *settings, opts []Option) error {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return errors.Join(s.errs...)
}

func (s *settings) misplaced(opt, owner string) {
	s.errs = append(s.errs, toolexec.OptionError("guard: %s is an option of %s; %s does not take it", opt, owner, s.ctor))
}

func repeatOption(name string, f func(*repeatGuard)) Option {
	return func(s *settings) {
		if s.repeat == nil {
			s.misplaced(name, "RepeatGuard")
			return
		}
		f(s.repeat)
	}
}

func failureOption(name string, f func(*failureGuard)) Option {
	return func(s *settings) {
		if s.failure == nil {
			s.misplaced(name, "FailureGuard")
			return
		}
		f(s.failure)
	}
}

func deadlineOption(name string, f func(*deadlines)) Option {
	return func(s *settings) {
		if s.deadlines == nil {
			s.misplaced(name, "Deadlines")
			return
		}
		f(s.deadlines)
	}
}

// WithExclude sets the tools a RepeatGuard or a FailureGuard ignores:
// their calls neither count nor break a run or a streak. It replaces the
// guard's default list: a RepeatGuard excludes todo, todo_read,
// todo_write, ask_user and ask_user_question unless told otherwise, a
// FailureGuard nothing. WithExclude() with no names excludes nothing.
func WithExclude(names ...string) Option {
	excluded := func() map[string]bool {
		m := make(map[string]bool, len(names))
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	return func(s *settings) {
		switch {
		case s.repeat != nil:
			s.repeat.excluded = excluded()
		case s.failure != nil:
			s.failure.excluded = excluded()
		default:
			s.misplaced("WithExclude", "RepeatGuard and FailureGuard")
		}
	}
}
