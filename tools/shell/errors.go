package shell

import "github.com/go-harness/harness/tools"

// Error codes of the shell tools, in addition to the codes of the tools
// package (invalid_arguments, timeout, aborted). They never change meaning
// once shipped.
const (
	// CodeBadWorkdir: the working directory does not exist, is not a
	// directory, or lies outside the workspace root.
	CodeBadWorkdir tools.ErrorCode = "bad_workdir"
	// CodeNoShell: bash could not be found or started.
	CodeNoShell tools.ErrorCode = "no_shell"
	// CodeSandbox: the sandbox refused to wrap the command.
	CodeSandbox tools.ErrorCode = "sandbox_denied"
	// CodeBusy: the persistent shell is still running an earlier command.
	CodeBusy tools.ErrorCode = "shell_busy"
	// CodeBrokenShell: the persistent shell runs, but its protocol no
	// longer works (a command closed its status channel or replaced its
	// eval), so it cannot run commands; close it and open a new one.
	CodeBrokenShell tools.ErrorCode = "shell_broken"
	// CodeUnknownSession: no open persistent shell has that id.
	CodeUnknownSession tools.ErrorCode = "unknown_shell"
	// CodeTooManySessions: the session already has the maximum number of
	// persistent shells open.
	CodeTooManySessions tools.ErrorCode = "too_many_shells"
	// CodeUnknownJob: no background job has that id.
	CodeUnknownJob tools.ErrorCode = "unknown_job"
	// CodeTooManyJobs: the session already keeps the maximum number of
	// background jobs.
	CodeTooManyJobs tools.ErrorCode = "too_many_jobs"
	// CodeUnsupported: the platform cannot run the shell tools.
	CodeUnsupported tools.ErrorCode = "unsupported"
)
