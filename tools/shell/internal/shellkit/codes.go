package shellkit

import "github.com/go-harness/harness"

// The codes the shell tools report beside the shared ones of the harness
// package; the shell package exports and documents them.
const (
	CodeBadWorkdir    harness.Code = "bad_workdir"
	CodeNoShell       harness.Code = "no_shell"
	CodeSandboxDenied harness.Code = "sandbox_denied"
	CodeShellBroken   harness.Code = "shell_broken"
	CodeTooManyJobs   harness.Code = "too_many_jobs"
	CodeTooManyShells harness.Code = "too_many_shells"
	CodeUnsupported   harness.Code = "unsupported"
)
