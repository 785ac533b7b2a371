package mcp

import (
	"context"
	"errors"

	"github.com/go-harness/harness/internal/proctree"
)

// ConnectWithoutNamespace is Connect with stdio servers' processes
// followed as a process tree, the containment used where no PID
// namespace can be made.
func ConnectWithoutNamespace(ctx context.Context, cfg *Config) (Set, error) {
	return connect(ctx, cfg, func(o *options) {
		o.containment = proctree.Options{NoNamespace: errors.New("forced for a test")}
	})
}

// ConnectWithFrameLimit is Connect with stdio messages read in memory up
// to frame bytes instead of 16 MiB (and MaxResultBytes at least that), so
// that the handling of larger ones can be tested with small data.
func ConnectWithFrameLimit(ctx context.Context, cfg *Config, frame int) (Set, error) {
	return connect(ctx, cfg, func(o *options) {
		o.frame = frame
		if cfg.MaxResultBytes > 0 {
			o.maxResult = max(cfg.MaxResultBytes, int64(frame))
		}
	})
}
