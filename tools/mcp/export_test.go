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
	return connect(ctx, cfg, proctree.Options{NoNamespace: errors.New("forced for a test")})
}
