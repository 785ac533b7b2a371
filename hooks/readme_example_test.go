package hooks_test

import (
	"io/fs"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/hooks"
	"github.com/go-harness/harness/instructions"
	"github.com/go-harness/harness/skills"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell"
)

// projectWiring is the README's code for instruction files, skills and
// hooks, compiled with the tests so the README cannot drift from the
// API.
func projectWiring(dir, home string, shipped fs.FS, sandbox shell.Sandbox) ([]agent.Option, error) {
	var opts []agent.Option
	opts = append(opts, agent.WithContext(instructions.New(instructions.Config{Home: home})))

	catalog, err := skills.New(skills.Config{Home: home, Embedded: []fs.FS{shipped}})
	if err != nil {
		return nil, err
	}
	opts = append(opts,
		agent.WithTools(catalog.Tool()),
		agent.WithContext(catalog),
		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{catalog.Middleware()}}),
	)

	runner, err := hooks.Load(hooks.Config{ProjectDir: dir, Home: home, Claude: true, Sandbox: sandbox})
	if err != nil {
		return nil, err
	}
	opts = append(opts, runner.Options()...)
	return opts, nil
}

var _ = projectWiring
