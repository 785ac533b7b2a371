package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"time"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/guard"
	"github.com/go-harness/harness/jobs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/images"
	"github.com/go-harness/harness/tools/sessiontools"
	"github.com/go-harness/harness/tools/shell"
)

// spillRetention is how long saved tool outputs are kept.
const spillRetention = 30 * 24 * time.Hour

// toolHooks returns the store of oversized tool output (old outputs
// removed) and the hooks around every tool call: spill and per-tool
// deadlines, repeated-call and failure reminders.
func (a *app) toolHooks(ctx context.Context, logger *slog.Logger) (spill.Store, agent.Hooks, error) {
	spillStore, err := spill.NewDir(filepath.Join(a.sessionsDir, "spill"), spill.StoreConfig{})
	if err != nil {
		return nil, agent.Hooks{}, err
	}
	spilling, err1 := spill.Middleware(spill.Config{})
	deadlines, err2 := guard.Deadlines(guard.DeadlineConfig{})
	repeats, err3 := guard.RepeatGuard(guard.RepeatConfig{})
	failures, err4 := guard.FailureGuard(guard.FailureConfig{})
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, agent.Hooks{}, err
	}
	if n, err := spillStore.Expire(ctx, time.Now().Add(-spillRetention)); err != nil && logger != nil {
		logger.Warn("removing old spilled outputs failed", "error", err)
	} else if n > 0 && logger != nil {
		logger.Debug("removed old spilled outputs", "count", n)
	}
	return spillStore, agent.Hooks{
		// Spill outermost, so output cut short by a deadline is still
		// saved whole.
		Tools: []tools.Middleware{spilling, deadlines},
		Steps: []tools.StepObserver{repeats, failures},
	}, nil
}

// tools returns the agent's tools, in a stable order (the request prefix
// stays byte-stable for prompt caching). read_image is offered only to a
// model that declares image input: any other would see it refuse every
// call.
// Tools whose specs are the same in every run are built at their first
// call (lazyGroup); the shell tools describe the sandbox and workspace of
// the run and are built at once, as the file tools, whose schemas are
// constants.
func (a *app) tools(withImages bool) []tools.Tool {
	ts := files.Tools(files.Config{})
	ts = append(ts, lazyGroup{searchSpecs, searchTools}.tools()...)
	if withImages {
		ts = append(ts, lazyGroup{imageSpecs, imageTools}.tools()...)
	}
	ts = append(ts, shell.Tools(shell.Config{Sandbox: a.sandboxed, Env: goCacheEnv(a.env), PassEnv: goPassEnv})...) // a nil sandbox: unconfined
	// job_list, job_output and job_stop over every kind of background
	// work: bash's run_in_background and task's background agents.
	ts = append(ts, lazyGroup{jobSpecs, jobs.Tools}.tools()...)
	store := a.store
	ts = append(ts, lazyGroup{sessionSpecs, func() []tools.Tool { return sessionTools(store) }}.tools()...)
	return ts
}

// The constructors of the tool groups built at their first call.
func searchTools() []tools.Tool { return codesearch.Tools(codesearch.Config{}) }
func imageTools() []tools.Tool  { return []tools.Tool{images.ReadImage(images.Config{})} }
func sessionTools(store session.Store) []tools.Tool {
	return sessiontools.Tools(store, sessiontools.Config{})
}

// systemPrompt tells the model where it is and how to work.
// more are further lines of the list of how to work, each starting
// with a newline.
func systemPrompt(root string, withImages bool, more string) string {
	lookAtImages := ""
	if withImages {
		lookAtImages = "\n- Look at images (screenshots, diagrams, rendered output) with read_image."
	}
	return `You are coder, a careful coding agent working for the user in the workspace ` + filepath.ToSlash(root) + ` on ` + runtime.GOOS + `.

Work in small, checked steps:
- Read a file before you change it. Use edit for changes to existing files and write for new files; keep changes minimal and in the style of the surrounding code.` + lookAtImages + more + `
- Run commands with bash: builds, tests, git, searches (rg or grep). Use shell_open and shell_send when state must persist between commands (a running server, a virtualenv); background jobs for long-running processes.
- Large outputs are saved whole; when a result says so, page through it with read using offset and limit instead of running the command again.
- When the user refers to earlier work, find it with session_search and session_read (earlier sessions in this workspace).
- When a reminder says you are repeating yourself or failing, stop and change your approach.
- Verify your work (build, run the tests) before you say it is done.

Answer briefly: what you changed, how you checked it, and anything the user must decide.`
}
