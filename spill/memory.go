package spill

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
	"time"

	"github.com/go-harness/harness/internal/spillname"

	"github.com/go-harness/harness/tools"
)

// memory is the Store of NewMemory.
type memory struct {
	mu      sync.Mutex
	outputs map[string]memOutput
	now     func() time.Time
	budget  *budget
}

type memOutput struct {
	session string // session dir name
	data    []byte
	saved   time.Time
}

// NewMemory returns an empty Store that keeps outputs in memory, for
// tests and for hosts that do not want files, or an error
// (harness.CodeInvalidOption) for an invalid Config. Its
// locators have the same shape as [NewDir]'s, and it keeps at most a
// budget of bytes per session as that store does. It is safe for
// concurrent use.
func NewMemory(cfg StoreConfig) (Store, error) {
	limit, err := cfg.sessionBudget()
	if err != nil {
		return nil, err
	}
	return &memory{outputs: map[string]memOutput{}, now: time.Now, budget: newBudget(limit)}, nil
}

// Save implements tools.OutputStore. An output that would take its session past
// the store's budget fails with harness.CodeSpillBudget (its cause a *BudgetError) and
// keeps nothing.
func (m *memory) Save(ctx context.Context, owner tools.Owner, r io.Reader) (tools.Stored, error) {
	if err := ctx.Err(); err != nil {
		return tools.Stored{}, err
	}
	sdir := spillname.SessionDir(owner.Session)
	var buf bytes.Buffer
	bw := &budgetWriter{w: &buf, b: m.budget, sdir: sdir, session: owner.Session}
	n, err := copyContext(ctx, bw, r)
	if err != nil {
		bw.refund()
		return tools.Stored{}, err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails
	loc := tools.OutputScheme + sdir + "/" + spillname.Sanitize(owner.Tool, 48) + "-" + spillname.Sanitize(owner.Call, 48) + "-" + hex.EncodeToString(rnd[:]) + ".txt"
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outputs[loc] = memOutput{session: sdir, data: buf.Bytes(), saved: m.now()}
	return tools.Stored{Locator: loc, Size: n}, nil
}

// Open implements tools.OutputStore.
func (m *memory) Open(ctx context.Context, locator string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	out, ok := m.outputs[locator]
	m.mu.Unlock()
	if !ok {
		return nil, locatorError(locator, errNotFound())
	}
	return io.NopCloser(bytes.NewReader(out.data)), nil
}

// DeleteSession implements Store.
func (m *memory) DeleteSession(ctx context.Context, session string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sdir := spillname.SessionDir(session)
	m.mu.Lock()
	defer m.mu.Unlock()
	for loc, out := range m.outputs {
		if out.session == sdir {
			delete(m.outputs, loc)
			m.budget.release(sdir, int64(len(out.data)))
		}
	}
	return nil
}

// Expire implements Store.
func (m *memory) Expire(ctx context.Context, cutoff time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for loc, out := range m.outputs {
		if out.saved.Before(cutoff) {
			delete(m.outputs, loc)
			m.budget.release(out.session, int64(len(out.data)))
			n++
		}
	}
	return n, nil
}
