package fs

// BinaryProbe exports binaryProbe to the tests.
const BinaryProbe = binaryProbe

// Len returns the number of files the ledger knows, for the tests.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// BOM is the UTF-8 byte order mark, for the tests.
const BOM = bom
