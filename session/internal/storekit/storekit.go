// Package storekit holds the rules every session store follows alike,
// the stores of package session and those kept elsewhere (a database):
// the log format version they write, the default bound on a log line,
// which ids name a session and how a new one is named, how a listing
// titles a session, and how the logs of a JSONL directory are listed.
//
// It imports only the standard library.
package storekit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	iofs "io/fs"
	"os"
	"sort"
	"strings"
	"time"
)

// FormatVersion is the newest log format this build writes and reads; a
// header of a newer one is refused.
const FormatVersion = 1

// DefaultMaxLineSize is the longest log line, in bytes without the
// newline, that a store accepts unless it is told otherwise.
const DefaultMaxLineSize = 16 << 20

// ValidID reports whether id can name a session: letters, digits, '_',
// '-' and '.', not starting with a punctuation mark, without "..", at
// most 128 bytes.
// (A loop, not a regular expression: compiling ^[A-Za-z0-9][...]{0,127}$
// took 1.8 ms and 118 KB at every program start.)
func ValidID(id string) bool {
	if id == "" || len(id) > 128 || strings.Contains(id, "..") {
		return false
	}
	for i := range len(id) {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// LogDir is what the JSONL store of package session tells package search
// about its files (through a method only packages of session can name the
// result of): the directory holding <id>.jsonl logs, the longest line
// the store writes or reads, and why the store cannot be used, if it
// cannot.
type LogDir struct {
	Path    string
	MaxLine int
	// Err is the store's configuration error, which a search returns
	// as the store's own methods do.
	Err error
}

// NewID returns a new session id: the UTC creation time to the second
// and 12 random hex digits, so that ids sort by creation time.
func NewID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Title returns the first non-blank line of s, trimmed and cut to 80
// runes ("…" ending a cut title).
func Title(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// LogFile is a log found in a JSONL store's directory.
type LogFile struct {
	ID   string
	Mod  time.Time
	Size int64
}

// LogFiles returns the logs in dir whose ids valid accepts, newest first
// by modification time (ties by id, descending), leaving out the ids in
// skip. A missing directory holds no logs; a log removed while it is
// listed is left out.
func LogFiles(dir string, skip map[string]bool, valid func(id string) bool) ([]LogFile, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	files := make([]LogFile, 0, len(entries))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || !valid(id) || skip[id] {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, LogFile{ID: id, Mod: fi.ModTime().UTC(), Size: fi.Size()})
	}
	sort.Slice(files, func(i, j int) bool {
		if !files[i].Mod.Equal(files[j].Mod) {
			return files[i].Mod.After(files[j].Mod)
		}
		return files[i].ID > files[j].ID
	})
	return files, nil
}
