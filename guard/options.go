package guard

import (
	"errors"

	"github.com/go-harness/harness/internal/toolexec"
)

// Option configures one of the guards. Each WithX option belongs to one
// constructor, as its documentation says (WithRepeat* to RepeatGuard,
// WithFailure* to FailureGuard, the deadline options to Deadlines);
// passing it to another is an error (harness.CodeInvalidOption), like an
// invalid value.
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
