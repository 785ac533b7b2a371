package sessiontools

import "github.com/go-harness/harness"

// The codes only this package reports, besides the shared ones of the
// harness package. Their text is public API like every code's: match
// one with errors.Is(err, harness.Code("...")) or compare ToolResult.Code.
const (
	// codeNoWorkspace (no_workspace): the calling session has no workspace to search.
	codeNoWorkspace harness.Code = "no_workspace"
	// codeOutsideWorkspace (outside_workspace): the session belongs to another workspace.
	codeOutsideWorkspace harness.Code = "outside_workspace"
)
