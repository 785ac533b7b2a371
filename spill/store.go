package spill

import (
	"context"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// Store saves tool output whole and keeps it for a while. Its Save and
// Open methods are those of tools.OutputStore, so a Store can be passed
// to the agent loop as its output store and tools find it as
// call.Env.Output. The retention methods let the host clean up: when a
// session is deleted, and periodically for old outputs.
//
// Implementations must be safe for concurrent use. The spilltest package
// checks that an implementation keeps this contract.
type Store interface {
	tools.OutputStore
	// DeleteSession removes every output saved for the session. Deleting
	// a session that saved nothing is not an error.
	DeleteSession(ctx context.Context, session string) error
	// Expire removes every output saved before cutoff and returns how many
	// it removed. Use time.Now().Add(-retention) as the cutoff.
	Expire(ctx context.Context, cutoff time.Time) (int, error)
}

// errNotFound is the cause of the error Open returns for a locator that
// does not name a saved output: a typo, a locator of another store, an
// output that retention removed, or an attempt to name a file outside the
// store. It matches harness.CodeNotFound (and so io/fs.ErrNotExist).
func errNotFound() error {
	return &harness.Error{Code: harness.CodeNotFound, Message: "spill: no saved output with this locator"}
}

// locatorError is the error of a locator Open refused or could not open:
// the code of err (harness.CodeIO when it has none; an unknown locator is
// harness.CodeNotFound, and so io/fs.ErrNotExist), with a message that
// says which locator failed and why, in words a model can act on.
func locatorError(locator string, err error) error {
	code := harness.CodeOf(err)
	if code == harness.CodeUnknown {
		code = harness.CodeIO
	}
	return &harness.Error{Code: code, Err: err, Message: "spill: " + quote(locator) + ": " + err.Error() +
		" (it may have been removed by retention; locators come from spill notices and must be used exactly as given)"}
}

func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c == 0x7f:
			const hexdigits = "0123456789abcdef"
			b = append(b, '\\', 'x', hexdigits[c>>4], hexdigits[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}
