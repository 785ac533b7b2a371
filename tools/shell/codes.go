package shell

import "github.com/go-harness/harness/tools/shell/internal/shellkit"

// The codes only the shell tools report, besides the shared ones of the
// harness package (invalid_arguments, timeout, aborted, busy, not_found,
// sandbox_unavailable). Match one with errors.Is(err, shell.CodeNoShell)
// or by comparing a result's Code.
const (
	// CodeBadWorkdir ("bad_workdir"): the working directory does not
	// exist, is not a directory, or lies outside the workspace root.
	CodeBadWorkdir = shellkit.CodeBadWorkdir
	// CodeNoShell ("no_shell"): bash could not be found or started.
	CodeNoShell = shellkit.CodeNoShell
	// CodeSandboxDenied ("sandbox_denied"): the sandbox refused to wrap
	// the command.
	CodeSandboxDenied = shellkit.CodeSandboxDenied
	// CodeShellBroken ("shell_broken"): the persistent shell runs, but its
	// protocol no longer works, so it cannot run commands.
	CodeShellBroken = shellkit.CodeShellBroken
	// CodeTooManyJobs ("too_many_jobs"): the session already keeps the
	// most background jobs.
	CodeTooManyJobs = shellkit.CodeTooManyJobs
	// CodeTooManyShells ("too_many_shells"): the session already has the
	// most persistent shells open.
	CodeTooManyShells = shellkit.CodeTooManyShells
	// CodeUnsupported ("unsupported"): the platform cannot run the tool.
	CodeUnsupported = shellkit.CodeUnsupported
)
