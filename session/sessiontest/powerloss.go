package sessiontest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
)

// PowerLossAttachments is an in-memory attachment store that models a
// power loss, for tests of code that stages what it stores (a
// checkpoint.Stager). Put is durable when it returns; Stage is durable
// only once a later Sync returns; PowerLoss forgets everything staged
// and not yet synced. Get finds both. It is safe for concurrent use.
type PowerLossAttachments struct {
	mu       sync.Mutex
	durable  map[string][]byte
	volatile map[string][]byte
	syncs    int
}

// NewPowerLossAttachments returns an empty PowerLossAttachments.
func NewPowerLossAttachments() *PowerLossAttachments {
	return &PowerLossAttachments{durable: map[string][]byte{}, volatile: map[string][]byte{}}
}

// Put stores a copy of data durably and returns its digest.
func (s *PowerLossAttachments) Put(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	d := attdigest.Of(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.durable[d] = slices.Clone(data)
	delete(s.volatile, d)
	return d, nil
}

// Stage stores a copy of data until the next PowerLoss, or durably once
// a later Sync returns, and returns its digest.
func (s *PowerLossAttachments) Stage(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	d := attdigest.Of(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.durable[d]; !ok {
		s.volatile[d] = slices.Clone(data)
	}
	return d, nil
}

// Sync makes everything staged durable.
func (s *PowerLossAttachments) Sync(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncs++
	maps.Copy(s.durable, s.volatile)
	clear(s.volatile)
	return nil
}

// Get returns a copy of what digest names, or an error of code
// harness.CodeInvalidDigest or harness.CodeNotFound.
func (s *PowerLossAttachments) Get(ctx context.Context, digest string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !attdigest.Valid(digest) {
		return nil, &harness.Error{Code: harness.CodeInvalidDigest, Message: fmt.Sprintf("invalid attachment digest %q", digest)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if data, ok := s.durable[digest]; ok {
		return slices.Clone(data), nil
	}
	if data, ok := s.volatile[digest]; ok {
		return slices.Clone(data), nil
	}
	return nil, &harness.Error{Code: harness.CodeNotFound, Message: "no attachment " + digest}
}

// Unsynced returns how many staged objects wait for a Sync.
func (s *PowerLossAttachments) Unsynced() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.volatile)
}

// Syncs returns how many times Sync was called.
func (s *PowerLossAttachments) Syncs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncs
}

// PowerLoss forgets everything staged and not yet synced.
func (s *PowerLossAttachments) PowerLoss() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.volatile)
}
