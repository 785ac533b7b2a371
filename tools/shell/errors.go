package shell

import (
	"github.com/go-harness/harness"
)

// Error codes of the shell tools, in addition to the codes of the tools
// package (invalid_arguments, timeout, aborted). They never change meaning
// once shipped.
const (
	// CodeBadWorkdir: the working directory does not exist, is not a
	// directory, or lies outside the workspace root.
	CodeBadWorkdir harness.Code = "bad_workdir"
	// CodeNoShell: bash could not be found or started.
	CodeNoShell harness.Code = "no_shell"
	// CodeSandbox: the sandbox refused to wrap the command.
	CodeSandbox harness.Code = "sandbox_denied"
	// CodeBusy: the persistent shell is still running an earlier command.
	CodeBusy harness.Code = "shell_busy"
	// CodeUnknownSession: no open persistent shell has that id.
	CodeUnknownSession harness.Code = "unknown_shell"
	// CodeTooManySessions: the session already has the maximum number of
	// persistent shells open.
	CodeTooManySessions harness.Code = "too_many_shells"
	// CodeUnknownJob: no background job has that id.
	CodeUnknownJob harness.Code = "unknown_job"
	// CodeTooManyJobs: the session already keeps the maximum number of
	// background jobs.
	CodeTooManyJobs harness.Code = "too_many_jobs"
	// CodeUnsupported: the platform cannot run the shell tools.
	CodeUnsupported harness.Code = "unsupported"
)
