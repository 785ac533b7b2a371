package tools

import (
	"errors"
	"io"
	"sync"

	"github.com/go-harness/harness"
)

// State holds values that live as long as one session: a tool's ledger,
// its shell sessions, a guard's counters. Keys should be values of an
// unexported type, as with context keys, so packages cannot collide.
//
// Values that implement io.Closer are closed, in reverse order of
// creation, when the session closes. State is safe for concurrent use.
// The zero value is an empty State, ready to use: a session's is
// &tools.State{}.
type State struct {
	mu     sync.Mutex
	values map[any]any
	order  []any
	closed bool
}

// errStateClosed is returned by LoadState when the session has closed: it
// matches harness.CodeClosed.
func errStateClosed() error {
	return &harness.Error{Code: harness.CodeClosed, Message: "tools: session state is closed"}
}

// load returns the value stored under key, creating it with create the
// first time.
func (s *State) load(key any, create func() any) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errStateClosed()
	}
	if v, ok := s.values[key]; ok {
		return v, nil
	}
	if s.values == nil {
		s.values = map[any]any{}
	}
	v := create()
	s.values[key] = v
	s.order = append(s.order, key)
	return v, nil
}

// Close closes every stored value that implements io.Closer, newest
// first, and refuses later loads. It returns the errors joined.
func (s *State) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	order, values := s.order, s.values
	s.order, s.values = nil, nil
	s.mu.Unlock()
	var errs []error
	for i := len(order) - 1; i >= 0; i-- {
		if c, ok := values[order[i]].(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// LoadState returns the value of type T stored in s under key, creating
// it with create the first time. create runs at most once per key, under
// the state's lock, so it must be quick and must not touch the State. It
// fails with harness.CodeClosed once the session has closed.
func LoadState[T any](s *State, key any, create func() T) (T, error) {
	v, err := s.load(key, func() any { return create() })
	if err != nil {
		var zero T
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		var zero T
		return zero, errors.New("tools: state key holds a value of another type")
	}
	return t, nil
}
