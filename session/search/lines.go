package search

import (
	"context"

	"github.com/go-harness/harness/session"
)

// Lines searches sessions whose event lines a store reads itself (a
// database, say), for a store implementing [Searcher] that must answer
// exactly as [Search] answers for a session.NewJSONL store. sessions lists the
// sessions to search, newest first, already narrowed to opts' workspace
// and exclusions; lines returns the i-th session's event lines (as
// session.Event.MarshalJSON writes them, without newlines) in log order.
// A store that picks candidate events itself may hand over only the
// lines that may match, or any superset of them: lines that do not match
// are ignored. lines is called from several goroutines at once
// (opts.Parallel) and not at all for sessions after the limit is
// reached. With no sessions, Lines only checks opts: an invalid query
// fails as Search fails.
func Lines(ctx context.Context, opts Options, sessions []session.Info, lines func(ctx context.Context, i int) ([][]byte, error)) ([]Match, error) {
	m, err := compile(opts)
	if err != nil {
		return nil, err
	}
	if len(sessions) == 0 {
		return nil, nil
	}
	return m.run(ctx, len(sessions), func(ctx context.Context, i int, ms *matchSink) error {
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
			if m.scanLines(line, ms) {
				break
			}
		}
		for j := range ms.matches {
			ms.matches[j].Session = sessions[i]
		}
		return nil
	})
}
