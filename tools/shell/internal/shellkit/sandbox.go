package shellkit

import "github.com/go-harness/harness/internal/proctree"

// Sandbox is shell.Sandbox, the contract of a sandbox, as the tools use
// it; shell.Sandbox documents it.
type Sandbox interface {
	Wrap(argv []string, dir string) ([]string, error)
	Describe() string
}

// PolicySandbox is a sandbox that enforces the path policy of the
// permission rules and wraps each command knowing how the tools contain
// it (shell.Bubblewrap, which bounds a command's processes through its
// PID namespace). The tool descriptions say what its masks mean.
type PolicySandbox interface {
	Sandbox
	WrapContained(argv []string, dir string, cont *proctree.Containment) ([]string, error)
}

// InitSandbox is a sandbox whose command lines are fit to be the init of
// the command's PID namespace (proctree.Command.Init): shell.Bubblewrap,
// whose bwrap makes a PID namespace of its own and ends everything in it
// when the command ends. The tools then start the wrapped command as the
// first process of their namespace, without an init and holder of their
// own.
type InitSandbox interface {
	Sandbox
	OwnInit() bool
}

// ownInit reports whether the configured sandbox's command lines are
// their own init.
func (c *Config) ownInit() bool {
	s, ok := c.Sandbox.(InitSandbox)
	return ok && s.OwnInit()
}

// SandboxText describes the sandbox in force, for the session log.
func (c *Config) SandboxText() string {
	if c.Sandbox == nil {
		return "none: commands run unconfined"
	}
	return c.Sandbox.Describe()
}

// ReachText tells the model, in the tool descriptions, what commands can
// reach: the sandbox in force (or that there is none) and the
// environment they get.
func (c *Config) ReachText() string {
	if c.Sandbox == nil {
		return "Commands run without a sandbox, with " + c.EnvText() + ". "
	}
	s := "Commands run in a sandbox (" + c.Sandbox.Describe() + "), with " + c.EnvText() + ". "
	if _, ok := c.Sandbox.(PolicySandbox); ok {
		s += "Files the permission rules hide read as empty there, and files they protect are read-only. "
	}
	return s
}
