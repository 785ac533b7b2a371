//go:build !unix

package shell

import "os"

const supported = false

func probeContainment(c *config) *containment {
	return &containment{kind: containGroup, reason: "this system has none"}
}

func startContained(c *containment, argv []string, dir string, env []string, stdout, stderr *os.File, extra []*os.File) (*proc, error) {
	return nil, errPlatform
}

func (p *proc) members(full bool) []member { return nil }
func (p *proc) terminate(ms []member)      {}
func (p *proc) finish() []member           { return nil }
func (p *proc) interrupt() error           { return errPlatform }
func (p *proc) killMain() error            { return errPlatform }
