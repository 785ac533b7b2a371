package attachments

// Path exposes the file of an attachment of a NewFiles store to the tests.
func (s *Store) Path(digest string) (string, error) { return s.backend().(*files).path(digest) }
