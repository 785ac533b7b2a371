package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools"
)

// wire returns the loop's options: the permission policy and its
// approver, the stores, the tools and the middleware around them, the
// MCP servers, the project context (instruction files, skills) and the
// settings' command hooks. What it starts is closed by a.closeAll, after
// the loop.
func (a *app) wire(ctx context.Context, logger *slog.Logger, m model.Model, fsys fs.FileSystem) ([]agent.Option, error) {
	spillStore, guards, err := a.toolHooks(ctx, logger)
	if err != nil {
		return nil, err
	}
	mcpSet, mcpLines, err := a.connectMCP(ctx, logger)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { mcpSet.Close() })
	a.statusLines = mcpLines
	withImages := slices.Contains(m.Info().Input, harness.ModalityImage)
	pol, err := a.policy()
	if err != nil {
		return nil, err
	}
	if a.sandboxed, err = a.sandbox(pol); err != nil {
		return nil, err
	}
	ts := a.tools(withImages)
	var more string
	if a.o.web.web {
		web, search, err := webTools(a.env, pol)
		if err != nil {
			return nil, err
		}
		ts, more = append(ts, web...), webPrompt(search)
	}
	// The dispatch chain, outermost first: the skills' file reads, spill
	// (so output cut short by a deadline is still saved whole), the
	// diagnostics after write and edit, the deadlines.
	spilling, deadlines := guards.Tools[0], guards.Tools[1]
	guards.Tools = []tools.Middleware{spilling}
	if a.o.web.diagnostics {
		diags, err := diagnostics(logger, a.sandboxed != nil)
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, func() { diags.Close() })
		guards.Tools = append(guards.Tools, diags.Middleware())
	}
	guards.Tools = append(guards.Tools, deadlines)
	proj, err := a.project(logger, pol)
	if err != nil {
		return nil, err
	}
	opts := []agent.Option{
		agent.WithPermissions(pol),
		agent.WithToolSource(mcpSet),
		agent.WithModel(m),
		agent.WithStores(agent.Stores{
			Sessions:    a.store,
			Files:       fsys,
			Output:      spillStore,
			Attachments: attachments.NewFiles(filepath.Join(a.sessionsDir, "attachments")),
		}),
		agent.WithContextPolicy(policyOf(a.o.context)),
		agent.WithSystemPrompt(systemPrompt(a.root, withImages, more)),
		agent.WithPrices(pricing.Builtin()),
	}
	opts = append(opts, proj.options(a.approver(), &guards)...)
	opts = append(opts, a.checkpointOptions()...)
	opts = append(opts, agent.WithTools(ts...), agent.WithDeferredTools(deferredTools()...), agent.WithHooks(guards))
	if a.o.explore {
		opts = append(opts, agent.WithSubAgents(subAgents()))
	}
	if a.o.maxSteps > 0 {
		opts = append(opts, agent.WithLimits(agent.Limits{MaxSteps: a.o.maxSteps}))
	}
	if logger != nil {
		opts = append(opts, agent.WithLogger(logger))
	}
	return opts, nil
}

// deferredTools names the tools the model loads when it needs them
// (agent.WithDeferredTools): listed by name and one line, their schemas
// stay out of every request until then. Prefixes, so that a tool a flag
// leaves out is no error.
func deferredTools() []string { return []string{"shell_*", "session_*", "web_*"} }

// closeAll closes what wire started, the last first.
func (a *app) closeAll() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}
