//go:build !unix

package proctree

const supported = false

func probe(o Options) *Containment {
	return &Containment{kind: containGroup, reason: "this system has none"}
}

func startContained(c *Containment, x Command) (*Proc, error) {
	return nil, ErrPlatform
}

func (p *Proc) Members(full bool) []Member { return nil }
func (p *Proc) terminate(ms []Member)      {}
func (p *Proc) finish() []Member           { return nil }
func (p *Proc) Interrupt() error           { return ErrPlatform }
func (p *Proc) KillMain() error            { return ErrPlatform }

// probeNamespace is probe: there is no cgroup containment here.
func probeNamespace(o Options) *Containment { return probe(o) }
