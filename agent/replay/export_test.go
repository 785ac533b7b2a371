package replay

// Calls returns how many recorded calls there are, for the tests.
func (m *Model) Calls() int { return m.recorded }
