package ui

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// historyLimit is how many prompts the history keeps per workspace.
const historyLimit = 500

// history is the prompts typed in one workspace, oldest first, kept in a
// file (one JSON string a line) so the next coder in the same directory
// has them too.
type history struct {
	path    string
	entries []string
}

// HistoryPath is the history file of a workspace: one file per
// workspace directory, named by a hash of its path.
func HistoryPath(sessionsDir, workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return filepath.Join(sessionsDir, "history", hex.EncodeToString(sum[:8])+".jsonl")
}

// loadHistory reads a history file; a missing file is an empty history
// and unreadable lines are skipped.
func loadHistory(path string) (*history, error) {
	h := &history{path: path}
	f, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if len(h.entries) > historyLimit {
		h.entries = h.entries[len(h.entries)-historyLimit:]
	}
	return h, sc.Err()
}

func (h *history) len() int {
	if h == nil {
		return 0
	}
	return len(h.entries)
}

func (h *history) at(i int) string { return h.entries[i] }

// add appends a prompt unless it repeats the last one, and saves it: an
// appended line, or the whole file rewritten (to a temporary file, then
// renamed over it) when it has grown to twice the limit.
func (h *history) add(s string) error {
	if h == nil || strings.TrimSpace(s) == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == s) {
		return nil
	}
	h.entries = append(h.entries, s)
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return err
	}
	line, _ := json.Marshal(s)
	if len(h.entries) > historyLimit {
		h.entries = h.entries[len(h.entries)-historyLimit:]
		if n, err := countLines(h.path); err == nil && n >= 2*historyLimit {
			return h.rewrite()
		}
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}

// rewrite replaces the file with the entries kept.
func (h *history) rewrite() error {
	tmp, err := os.CreateTemp(filepath.Dir(h.path), ".history-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(tmp)
	for _, e := range h.entries {
		line, _ := json.Marshal(e)
		w.Write(append(line, '\n'))
	}
	err = errors.Join(w.Flush(), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), h.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func countLines(path string) (int, error) {
	f, err := openRegular(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 32<<10)
	for {
		k, err := f.Read(buf)
		for _, c := range buf[:k] {
			if c == '\n' {
				n++
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// openRegular opens the file at path for reading if it is a regular
// file, so a history that is a named pipe or a device is an error rather
// than a read that blocks or never ends. The file lives in the coder's
// own directory, so the check before opening it is enough.
func openRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	return os.Open(path)
}
