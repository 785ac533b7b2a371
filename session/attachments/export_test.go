package attachments

// Path exposes the file of an attachment to the tests.
func (d *Files) Path(digest string) (string, error) { return d.path(digest) }
