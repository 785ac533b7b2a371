//go:build unix

package mcp

import "github.com/go-harness/harness/internal/proctree"

// start starts a server contained in c.
func start(c *proctree.Containment, x proctree.Command) (running, error) {
	return proctree.Start(c, x)
}
