package mcp

import (
	"log/slog"
	"time"

	"github.com/go-harness/harness/internal/toolexec"
)

// Option configures Connect.
type Option func(*options)

type options struct {
	connectTimeout time.Duration
	terminate      time.Duration
	maxRestarts    int
	logger         *slog.Logger
	events         func(Event)
	errs           []error
}

// Defaults.
const (
	defaultConnectTimeout = 30 * time.Second
	defaultTerminate      = time.Second
	defaultMaxRestarts    = 3
)

func defaultOptions() options {
	return options{connectTimeout: defaultConnectTimeout, terminate: defaultTerminate, maxRestarts: defaultMaxRestarts}
}

// WithConnectTimeout bounds starting a server, the protocol handshake
// and the first tool listing (default 30 s). It must be positive.
func WithConnectTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, toolexec.OptionError("mcp: WithConnectTimeout(%v): the connect timeout must be positive", d))
			return
		}
		o.connectTimeout = d
	}
}

// WithTerminateDuration sets how long closing a stdio server waits for it
// to exit after its input is closed, and again after SIGTERM, before it is
// killed (default 1 s). It must be positive.
func WithTerminateDuration(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, toolexec.OptionError("mcp: WithTerminateDuration(%v): the terminate duration must be positive", d))
			return
		}
		o.terminate = d
	}
}

// WithMaxRestarts bounds how many times a server that stopped is started
// again, each on the next call of one of its tools (default 3). Zero
// means never.
func WithMaxRestarts(n int) Option {
	return func(o *options) {
		if n < 0 {
			o.errs = append(o.errs, toolexec.OptionError("mcp: WithMaxRestarts(%d): the restart limit cannot be negative", n))
			return
		}
		o.maxRestarts = n
	}
}

// WithLogger sets the logger for connection diagnostics (silent by
// default).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithEvents sets the function that hears what happens to the servers:
// connections, crashes, restarts, changed tool lists and the progress of
// running calls. It is called from the servers' goroutines, one event at
// a time per server; it must return quickly.
func WithEvents(f func(Event)) Option { return func(o *options) { o.events = f } }
