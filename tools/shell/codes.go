package shell

import "github.com/go-harness/harness"

// The codes only this package reports, besides the shared ones of the
// harness package. Their text is public API like every code's: match
// one with errors.Is(err, harness.Code("...")) or compare ToolResult.Code.
const (
	// codeBadWorkdir (bad_workdir): the working directory does not exist, is not a
	// directory, or lies outside the workspace root.
	codeBadWorkdir harness.Code = "bad_workdir"
	// codeNoShell (no_shell): bash could not be found or started.
	codeNoShell harness.Code = "no_shell"
	// codeSandboxDenied (sandbox_denied): the sandbox refused to wrap the command.
	codeSandboxDenied harness.Code = "sandbox_denied"
	// codeShellBroken (shell_broken): the persistent shell runs, but its protocol no
	// longer works, so it cannot run commands.
	codeShellBroken harness.Code = "shell_broken"
	// codeTooManyJobs (too_many_jobs): the session already keeps the most background
	// jobs.
	codeTooManyJobs harness.Code = "too_many_jobs"
	// codeTooManyShells (too_many_shells): the session already has the most persistent
	// shells open.
	codeTooManyShells harness.Code = "too_many_shells"
	// codeUnsupported (unsupported): the platform cannot run the tool.
	codeUnsupported harness.Code = "unsupported"
)
