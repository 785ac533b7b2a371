// Package logs holds the one default of the module's logging: a nil
// *slog.Logger means "log nothing".
package logs

import "log/slog"

// OrDiscard returns l, or a logger that discards everything when l is
// nil. Every package that accepts an optional logger resolves it here.
func OrDiscard(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}
