package session

// Path exposes the file of a session to the tests.
func (s *JSONL) Path(id string) string { return s.path(id) }

// Interrupted reports whether the last turn began but has not ended.
func (h *History) Interrupted() bool { return h.open }
