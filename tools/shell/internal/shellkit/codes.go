package shellkit

import "github.com/go-harness/harness"

// The codes the shell tools report beside the shared ones of the harness
// package. The shell package exports them (shell.CodeNoShell, ...) and
// documents each.
const (
	CodeBadWorkdir    harness.Code = "bad_workdir"
	CodeNoShell       harness.Code = "no_shell"
	CodeSandboxDenied harness.Code = "sandbox_denied"
	CodeShellBroken   harness.Code = "shell_broken"
	CodeTooManyJobs   harness.Code = "too_many_jobs"
	CodeTooManyShells harness.Code = "too_many_shells"
	CodeUnsupported   harness.Code = "unsupported"
)
