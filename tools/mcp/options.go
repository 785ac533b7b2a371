package mcp

import (
	"errors"
	"log/slog"
	"time"

	"github.com/go-harness/harness/internal/logs"
	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/internal/toolexec"
)

// options are the settings of a set, from its Config with the defaults
// filled in.
type options struct {
	connectTimeout time.Duration
	terminate      time.Duration
	maxRestarts    int
	maxSchema      int
	maxTools       int
	maxResult      int64
	// frame is the largest message of a stdio server read in memory:
	// maxFrame, which tests lower.
	frame  int
	logger *slog.Logger
	events func(Event)
	// containment is what the probe of stdio servers' containment is
	// given; tests force the process tree with it.
	containment proctree.Options
}

// Defaults.
const (
	defaultConnectTimeout = 30 * time.Second
	defaultTerminate      = time.Second
	defaultMaxRestarts    = 3
	defaultMaxSchema      = 32 << 10
	defaultMaxTools       = 128
	defaultMaxResult      = 256 << 20
)

// optionsOf checks the settings of cfg and fills in the defaults of its
// zero fields.
func optionsOf(cfg *Config) (options, error) {
	o := options{connectTimeout: defaultConnectTimeout, terminate: defaultTerminate, maxRestarts: defaultMaxRestarts,
		maxSchema: defaultMaxSchema, maxTools: defaultMaxTools, maxResult: defaultMaxResult, frame: maxFrame, logger: logs.OrDiscard(cfg.Logger), events: cfg.Events}
	var errs []error
	switch {
	case cfg.ConnectTimeout < 0:
		errs = append(errs, toolexec.OptionError("mcp: Config.ConnectTimeout %v: the connect timeout must not be negative (zero keeps the default, 30s)", cfg.ConnectTimeout))
	case cfg.ConnectTimeout > 0:
		o.connectTimeout = cfg.ConnectTimeout
	}
	switch {
	case cfg.TerminateDuration < 0:
		errs = append(errs, toolexec.OptionError("mcp: Config.TerminateDuration %v: the terminate duration must not be negative (zero keeps the default, 1s)", cfg.TerminateDuration))
	case cfg.TerminateDuration > 0:
		o.terminate = cfg.TerminateDuration
	}
	switch {
	case cfg.MaxSchemaBytes < 0:
		errs = append(errs, toolexec.OptionError("mcp: Config.MaxSchemaBytes %d: the bound must not be negative (zero keeps the default, 32 KiB)", cfg.MaxSchemaBytes))
	case cfg.MaxSchemaBytes > 0:
		o.maxSchema = cfg.MaxSchemaBytes
	}
	switch {
	case cfg.MaxTools < 0:
		errs = append(errs, toolexec.OptionError("mcp: Config.MaxTools %d: the bound must not be negative (zero keeps the default, 128)", cfg.MaxTools))
	case cfg.MaxTools > 0:
		o.maxTools = cfg.MaxTools
	}
	switch {
	case cfg.MaxResultBytes < 0:
		errs = append(errs, toolexec.OptionError("mcp: Config.MaxResultBytes %d: the bound must not be negative (zero keeps the default, 256 MiB)", cfg.MaxResultBytes))
	case cfg.MaxResultBytes > 0:
		o.maxResult = max(cfg.MaxResultBytes, maxFrame)
	}
	switch {
	case cfg.MaxRestarts < 0:
		o.maxRestarts = 0
	case cfg.MaxRestarts > 0:
		o.maxRestarts = cfg.MaxRestarts
	}
	return o, errors.Join(errs...)
}
