package spill

import "github.com/go-harness/harness/internal/spillwriter"

// SessionBudget returns the most bytes the store keeps for one session.
func (d *dirStore) SessionBudget() int64 { return d.budget.limit }

// SessionBudgetOf returns the session budget of a store of this package.
func SessionBudgetOf(s Store) int64 {
	return s.(interface{ SessionBudget() int64 }).SessionBudget()
}

// DefaultSessionBudget is the budget a store keeps unless
// StoreConfig.SessionBudget says otherwise.
const DefaultSessionBudget = defaultSessionBudget

// SessionBudget returns the most bytes the store keeps for one session.
func (m *memory) SessionBudget() int64 { return m.budget.limit }

// Root returns the directory the store keeps outputs in.
func (d *dirStore) Root() string { return d.root }

// LenOf returns how many outputs a store of NewMemory holds.
func LenOf(s Store) int {
	m := s.(*memory)
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.outputs)
}

// DefaultThreshold is the policy's threshold unless Config.Threshold
// sets another.
const DefaultThreshold = spillwriter.DefaultThreshold

// MinThreshold is the smallest threshold Config.Threshold accepts.
const MinThreshold = spillwriter.MinThreshold
