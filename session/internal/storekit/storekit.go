// Package storekit holds the rules every session store follows alike,
// the stores of package session and those kept elsewhere (a database):
// how a new session is named and how a listing titles a session.
//
// It imports only the standard library.
package storekit

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
)

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
