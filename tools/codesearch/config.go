package codesearch

import (
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

// Config configures the search tools: how they walk the tree. The zero
// value walks as ripgrep does by default (see the package
// documentation). An invalid value is reported by each tool's Validate
// method (harness.CodeInvalidOption), so tools.NewRegistry refuses the
// tools.
type Config struct {
	// Hidden also searches hidden files and directories (names starting
	// with '.'), which are skipped by default. A .git directory is
	// skipped even so.
	Hidden bool
	// NoIgnore disregards .gitignore, .ignore and .git/info/exclude
	// rules, which are respected by default.
	NoIgnore bool
	// Workers is how many directories the walk lists, and how many files
	// grep reads and searches, at once. Zero means GOMAXPROCS, at most 4;
	// a negative value is an error.
	Workers int
}

// config is a Config with its defaults filled in.
type config struct {
	hidden   bool
	noIgnore bool
	workers  int
	err      error
}

// resolve fills in the defaults of cfg and checks it.
func (cfg Config) resolve() config {
	c := config{hidden: cfg.Hidden, noIgnore: cfg.NoIgnore, workers: min(runtime.GOMAXPROCS(0), maxWorkers)}
	switch {
	case cfg.Workers < 0:
		c.err = toolexec.OptionError("codesearch: Config%+v: Workers must not be negative (zero keeps the default)", cfg)
	case cfg.Workers > 0:
		c.workers = cfg.Workers
	}
	return c
}

// Tools returns glob and grep, in that order.
func Tools(cfg Config) []tools.Tool {
	return []tools.Tool{Glob(cfg), Grep(cfg)}
}
