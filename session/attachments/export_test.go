package attachments

import "os"

// Path exposes the file of an attachment of a NewFiles store to the tests.
func (s *Store) Path(digest string) (string, error) { return s.backend().(*files).path(digest) }

// SetSyncs replaces how a NewFiles store syncs a file's content and a
// directory's entries, so the tests can model a power loss.
func (s *Store) SetSyncs(file func(*os.File) error, dir func(string) error) {
	f := s.backend().(*files)
	f.syncFile, f.syncDir = file, dir
}
