package session

// Path exposes the file of a session to the tests.
func (s *JSONL) Path(id string) string { return s.path(id) }
