package session

import "github.com/go-harness/harness/session/internal/storekit"

// TestJSONL is the store NewJSONL returns, as the external tests reach
// into it: its directory and the file of a session.
type TestJSONL struct{ *jsonlStore }

// NewTestJSONL returns NewJSONL's store for the tests.
func NewTestJSONL(dir string, cfg StoreConfig) TestJSONL {
	return TestJSONL{newJSONL(dir, cfg)}
}

// Dir returns the store's directory.
func (s TestJSONL) Dir() string { return s.dir }

// Path returns the file of a session.
func (s TestJSONL) Path(id string) string { return s.path(id) }

// Interrupted reports whether the last turn began but has not ended.
func (h *History) Interrupted() bool { return h.open }

// ShortestHeaderLine is the length of the shortest header line the log
// format allows, and MinLineSize the bound StoreConfig.MaxLineSize requires.
func ShortestHeaderLine() int {
	line, err := marshalHeader(Header{Format: storekit.FormatVersion, ID: "a"})
	if err != nil {
		panic(err)
	}
	return len(line)
}

const MinLineSize = minLineSize

// Syncs returns how many times a JSONL log synced its file and its
// directory.
func Syncs(l Log) (file, dir int) {
	j := l.(*jsonlLog)
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.fileSyncs, j.dirSyncs
}

// Writes returns how many writes a JSONL log made, and whether it holds
// a buffer.
func Writes(l Log) (writes int, buffered bool) {
	j := l.(*jsonlLog)
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.writes, j.pending != nil
}

// LogFD returns the descriptor of a JSONL log's open file, -1 when it
// has none.
func LogFD(l Log) int {
	j := l.(*jsonlLog)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return -1
	}
	return int(j.f.Fd())
}
