package codesearch

import (
	"errors"
	"runtime"

	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// Limits of results and work.
const (
	defaultLimit = 100  // results shown when the model gives no limit
	maxLimit     = 1000 // the most head_limit may ask for
	maxContext   = 20   // the most context lines on each side
	lineCut      = 400  // bytes of a shown line; the rest is elided
	chunkSize    = 256 << 10
	maxLineBuf   = 4 << 20 // a longer line is matched in pieces
	maxMultiline = 8 << 20 // files larger are not searched in multiline mode
	maxRuleFile  = 1 << 20 // ignore files larger are not read
	maxWorkers   = 4
)

// Option configures the search tools.
type Option func(*config)

type config struct {
	hidden   bool
	noIgnore bool
	workers  int
	err      error
}

func newConfig(opts []Option) config {
	c := config{workers: min(runtime.GOMAXPROCS(0), maxWorkers)}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Walk changes how the tools walk the tree. The zero value walks as
// ripgrep does by default (see the package documentation).
type Walk struct {
	// Hidden also searches hidden files and directories (names starting
	// with '.'), which are skipped by default. A .git directory is
	// skipped even so.
	Hidden bool
	// NoIgnore disregards .gitignore, .ignore and .git/info/exclude
	// rules, which are respected by default.
	NoIgnore bool
	// Workers is how many directories the walk lists, and how many files
	// grep reads and searches, at once. Zero means GOMAXPROCS, at most 4.
	Workers int
}

// WithWalk sets how the tools walk the tree; see Walk. A negative
// Workers is an error, which each tool's Validate method reports (so
// tools.NewRegistry refuses the tools).
func WithWalk(w Walk) Option {
	return func(c *config) {
		if w.Workers < 0 {
			c.err = errors.Join(c.err, toolexec.OptionError("codesearch: WithWalk(%+v): Workers must not be negative (zero keeps the default)", w))
			return
		}
		c.hidden, c.noIgnore = w.Hidden, w.NoIgnore
		if w.Workers > 0 {
			c.workers = w.Workers
		}
	}
}

// Tools returns glob and grep, in that order. An invalid option value is
// reported by each tool's Validate method (harness.CodeInvalidOption).
func Tools(opts ...Option) []tools.Tool {
	return []tools.Tool{Glob(opts...), Grep(opts...)}
}
