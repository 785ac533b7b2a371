package spill

// SessionBudget returns the most bytes the store keeps for one session.
func (d *Dir) SessionBudget() int64 { return d.budget.limit }

// SessionBudget returns the most bytes the store keeps for one session.
func (m *Memory) SessionBudget() int64 { return m.budget.limit }

// Root returns the directory the store keeps outputs in.
func (d *Dir) Root() string { return d.root }

// Len returns how many outputs the store holds.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.outputs)
}
