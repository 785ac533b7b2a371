package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-harness/harness"
)

// ForkOptions say where Store.Fork forks.
type ForkOptions struct {
	// ID names the new session; empty makes a new id.
	ID string
	// At is the sequence number of the last event copied; 0 copies
	// every event.
	At int64
}

// Meta is what a session carries beside its log: the title it was
// given (Store.Rename) and its tags (Store.Tag). Stores keep it apart
// from the log (a file beside it, a column), so that renaming or tagging
// never rewrites the log, works while the log is open for appending
// elsewhere, and shows in List without reading the log. A fork starts
// without one. The zero Meta has no title and no tags.
type Meta struct {
	Title string   `json:"title,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

// MetaChange is one change of a Meta: a new title, or tags added and
// removed. The JSONL store logs these beside a session's log; every
// store applies them with Meta.Apply, the one definition of what they
// do.
type MetaChange struct {
	// Title, when not nil, replaces the title ("" clears it).
	Title *string `json:"title,omitempty"`
	// Add and Remove are tags added, then removed.
	Add    []string `json:"add,omitempty"`
	Remove []string `json:"remove,omitempty"`
}

// Bounds on a Meta.
const (
	// MaxTitleBytes is the longest title Rename accepts.
	MaxTitleBytes = 200
	// MaxTagBytes is the longest tag Tag accepts.
	MaxTagBytes = 64
	// MaxTags is the most tags a session carries.
	MaxTags = 64
)

// Apply returns m changed by c: the title replaced, then c.Add added
// and c.Remove removed, the tags kept sorted and each once. A title
// longer than MaxTitleBytes or holding invalid UTF-8 or control
// characters, a tag that is empty, longer than MaxTagBytes or holds
// anything but letters, digits and "-_.:/+@", or more than MaxTags tags
// fail with an error matching harness.CodeInvalidOption, and m is
// returned unchanged.
func (m Meta) Apply(c MetaChange) (Meta, error) {
	out := Meta{Title: m.Title, Tags: slices.Clone(m.Tags)}
	if c.Title != nil {
		t := strings.TrimSpace(*c.Title)
		if err := checkTitle(t); err != nil {
			return m, err
		}
		out.Title = t
	}
	for _, tag := range slices.Concat(c.Add, c.Remove) {
		if err := checkTag(tag); err != nil {
			return m, err
		}
	}
	out.Tags = append(out.Tags, c.Add...)
	slices.Sort(out.Tags)
	out.Tags = slices.Compact(out.Tags)
	out.Tags = slices.DeleteFunc(out.Tags, func(t string) bool { return slices.Contains(c.Remove, t) })
	if len(out.Tags) > MaxTags {
		return m, metaErr("a session carries at most %d tags; remove some first", MaxTags)
	}
	if len(out.Tags) == 0 {
		out.Tags = nil
	}
	return out, nil
}

// HasTags reports whether m carries every tag of tags.
func (m Meta) HasTags(tags []string) bool {
	for _, t := range tags {
		if _, ok := slices.BinarySearch(m.Tags, t); !ok {
			return false
		}
	}
	return true
}

func metaErr(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "session: " + fmt.Sprintf(format, args...)}
}

func checkTitle(t string) error {
	if len(t) > MaxTitleBytes {
		return metaErr("a title is at most %d bytes, this one %d", MaxTitleBytes, len(t))
	}
	if !utf8.ValidString(t) {
		return metaErr("a title must be UTF-8 text")
	}
	for _, r := range t {
		if unicode.IsControl(r) {
			return metaErr("a title is one line without control characters; got %q", t)
		}
	}
	return nil
}

func checkTag(t string) error {
	if t == "" || len(t) > MaxTagBytes {
		return metaErr("a tag is 1 to %d bytes; got %q", MaxTagBytes, t)
	}
	for _, r := range t {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.:/+@", r) {
			return metaErr("a tag holds letters, digits and -_.:/+@ only; got %q", t)
		}
	}
	return nil
}

// Describe sets info's title (when m has one) and tags from m, as List
// shows them.
func (m Meta) Describe(info *Info) {
	if m.Title != "" {
		info.Title = m.Title
	}
	info.Tags = m.Tags
}

// readMetaChanges applies the changes logged in data, one JSON line
// each, in order; lines that do not decode or apply (a torn last line)
// are skipped.
func readMetaChanges(data []byte) Meta {
	var m Meta
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil // unterminated: a write cut short
			break
		}
		var c MetaChange
		if json.Unmarshal(line, &c) != nil {
			continue
		}
		if next, err := m.Apply(c); err == nil {
			m = next
		}
	}
	return m
}

// lineSeq returns the sequence number of an event line: quickly from
// the start Event.MarshalJSON writes, else by decoding its envelope.
func lineSeq(line []byte) (int64, bool) {
	if rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`)); ok {
		end := bytes.IndexByte(rest, ',')
		if end > 0 && end <= 20 {
			if n, err := strconv.ParseInt(string(rest[:end]), 10, 64); err == nil {
				return n, true
			}
		}
	}
	var env struct {
		Seq *int64 `json:"seq"`
	}
	if json.Unmarshal(line, &env) != nil || env.Seq == nil {
		return 0, false
	}
	return *env.Seq, true
}

// forkHeader is the header of a fork of parent made with opts.
func forkHeader(parent Header, opts ForkOptions, at int64) Header {
	return Header{ID: opts.ID, Cwd: parent.Cwd, Parent: parent.ID, ForkSeq: at}
}

// noEvent is the error of a fork point a session does not have.
func noEvent(id string, at int64) error {
	return &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("session %s: no event %d to fork at", id, at)}
}
