package spill

import (
	"fmt"
	"io"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
)

// defaultSessionBudget is how many bytes of output a store keeps for one
// session unless StoreConfig.SessionBudget says otherwise: 4 GiB.
const defaultSessionBudget int64 = 4 << 30

// BudgetError is the detail of a Save refused because the session's
// outputs would take more than the store's budget: Save fails with a
// *harness.Error of code harness.CodeSpillBudget whose cause is a
// *BudgetError (read it with errors.As), and nothing of the output is
// kept.
type BudgetError struct {
	// Session is the owner's session id.
	Session string
	// Budget is the most bytes the store keeps for one session.
	Budget int64
	// Used is how many bytes the session's other outputs take.
	Used int64
}

// Error says why the output was not saved, in words a model can act on.
func (e *BudgetError) Error() string {
	if e.Used <= 0 {
		return fmt.Sprintf("spill: the output is larger than the session's whole spill budget of %s", units.Bytes(e.Budget))
	}
	return fmt.Sprintf("spill: the output does not fit in what is left of the session's spill budget of %s: %s of it is taken by outputs kept until they expire or are deleted",
		units.Bytes(e.Budget), units.Bytes(e.Used))
}

// StoreConfig configures a store of [NewDir] or [NewMemory]. The zero
// value is the default.
type StoreConfig struct {
	// SessionBudget is the most bytes of output the store keeps for one
	// session, besides any cap a tool puts on one output; 0 means 4 GiB.
	// A Save that would go past it fails with an error matching
	// harness.CodeSpillBudget and keeps nothing; outputs that expire or
	// are deleted give their bytes back. A negative budget is an error of
	// the store's constructor (harness.CodeInvalidOption).
	SessionBudget int64
}

// sessionBudget returns the budget c asks for.
func (c StoreConfig) sessionBudget() (int64, error) {
	switch {
	case c.SessionBudget < 0:
		return 0, toolexec.OptionError("spill: StoreConfig.SessionBudget is %d: the session budget must be positive (0 means the default)", c.SessionBudget)
	case c.SessionBudget == 0:
		return defaultSessionBudget, nil
	}
	return c.SessionBudget, nil
}

// budget counts the bytes a store keeps per session (by session
// directory name), outputs being saved included.
type budget struct {
	limit int64
	mu    sync.Mutex
	used  map[string]int64
}

func newBudget(limit int64) *budget { return &budget{limit: limit, used: map[string]int64{}} }

// reserve takes n bytes of a session's budget. The first time it sees a
// session it asks count for the bytes the session already keeps (nil
// means none).
func (b *budget) reserve(sdir, session string, n int64, own int64, count func() (int64, error)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	used, ok := b.used[sdir]
	if !ok && count != nil {
		c, err := count()
		if err != nil {
			return fmt.Errorf("spill: counting the bytes saved for the session: %w", err)
		}
		used = c
	}
	if n > b.limit-used {
		b.used[sdir] = used
		return &harness.Error{Code: harness.CodeSpillBudget, Err: &BudgetError{Session: session, Budget: b.limit, Used: used - own}}
	}
	b.used[sdir] = used + n
	return nil
}

// release gives n bytes back to a session's budget.
func (b *budget) release(sdir string, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if used, ok := b.used[sdir]; ok {
		b.used[sdir] = max(used-n, 0)
	}
}

// forget drops a session's count: its outputs were deleted.
func (b *budget) forget(sdir string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.used, sdir)
}

// budgetWriter charges what it writes to a session's budget, and fails
// with harness.CodeSpillBudget when a write does not fit.
type budgetWriter struct {
	w       io.Writer
	b       *budget
	sdir    string
	session string
	count   func() (int64, error)
	charged int64
}

func (bw *budgetWriter) Write(p []byte) (int, error) {
	if err := bw.b.reserve(bw.sdir, bw.session, int64(len(p)), bw.charged, bw.count); err != nil {
		return 0, err
	}
	n, err := bw.w.Write(p)
	if n < len(p) {
		bw.b.release(bw.sdir, int64(len(p)-n))
	}
	bw.charged += int64(n)
	return n, err
}

// refund gives back everything the writer charged: its output was not
// kept.
func (bw *budgetWriter) refund() {
	bw.b.release(bw.sdir, bw.charged)
	bw.charged = 0
}
