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

// WithHidden makes the tools also search hidden files and directories
// (names starting with '.'), which they skip by default. A .git
// directory is skipped even so.
func WithHidden() Option { return func(c *config) { c.hidden = true } }

// WithNoIgnore makes the tools disregard .gitignore, .ignore and
// .git/info/exclude rules, which they respect by default.
func WithNoIgnore() Option { return func(c *config) { c.noIgnore = true } }

// WithWorkers sets how many files grep reads and searches at once: by
// default GOMAXPROCS, at most 4. It must be positive.
func WithWorkers(n int) Option {
	return func(c *config) {
		if n <= 0 {
			c.err = errors.Join(c.err, toolexec.OptionError("codesearch: WithWorkers(%d): the number must be positive", n))
			return
		}
		c.workers = n
	}
}

// Tools returns glob and grep, in that order. An invalid option value is
// reported by each tool's Validate method (harness.CodeInvalidOption).
func Tools(opts ...Option) []tools.Tool {
	return []tools.Tool{Glob(opts...), Grep(opts...)}
}
