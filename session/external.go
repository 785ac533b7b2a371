package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// This file holds what a Store kept outside this module (a database, an
// object store) needs to behave exactly as JSONL does: decode its event
// lines with the same repairs and warnings, name a session the same way
// in a listing, and search the same text the same way.

// ReadEvents decodes the event lines of session h's log (one event per
// line, as Event.MarshalJSON writes them, each ended by a newline) as the
// stores of this package load a log: with the same repairs and the same
// warnings, numbered as if h's header were line 1. It takes
// WithMaxLineSize; other options are ignored.
func ReadEvents(ctx context.Context, h Header, lines io.Reader, opts ...StoreOption) (*Transcript, error) {
	cfg := newStoreConfig(opts)
	line, err := marshalHeader(h)
	if err != nil {
		return nil, fmt.Errorf("session %s: encoding header: %w", h.ID, err)
	}
	line = append(line, '\n')
	ld, err := readTranscript(ctx, io.MultiReader(bytes.NewReader(line), lines), h.ID, cfg.maxLine)
	if err != nil {
		return nil, err
	}
	return ld.t, nil
}

// Title returns what Info.Title shows for a session whose first user
// message is u: the first non-blank line of its text, cut to 80
// characters.
func (u *UserMessage) Title() string { return titleOf(u) }

// SearchLines searches sessions whose lines a store reads itself, as
// Search searches a JSONL store: sessions lists the sessions to search,
// newest first, already narrowed to opts' workspace and exclusions, and
// lines returns the i-th session's event lines (as Event.MarshalJSON
// writes them, without newlines) in log order. A store that picks
// candidate events itself (in SQL, say) may hand over only the lines
// that may match, and any superset of them: lines that do not match are
// ignored. lines is called from several goroutines at once
// (opts.Parallel) and not at all for sessions after the limit is
// reached.
func SearchLines(ctx context.Context, opts SearchOptions, sessions []Info, lines func(ctx context.Context, i int) ([][]byte, error)) ([]Match, error) {
	sr, err := compileSearch(opts)
	if err != nil {
		return nil, err
	}
	return sr.searchLines(ctx, sessions, lines)
}

func (sr *searcher) searchLines(ctx context.Context, sessions []Info, lines func(ctx context.Context, i int) ([][]byte, error)) ([]Match, error) {
	return sr.run(ctx, len(sessions), func(ctx context.Context, i int, ms *matchSink) error {
		ls, err := lines(ctx, i)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		for j, line := range ls {
			if j%1024 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if sr.scanLines(line, ms) {
				break
			}
		}
		for j := range ms.matches {
			ms.matches[j].Session = sessions[i]
		}
		return nil
	})
}
