package spill

// SessionBudget returns the most bytes the store keeps for one session.
func (d *Dir) SessionBudget() int64 { return d.budget.limit }

// SessionBudget returns the most bytes the store keeps for one session.
func (m *Memory) SessionBudget() int64 { return m.budget.limit }
