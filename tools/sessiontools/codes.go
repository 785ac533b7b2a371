package sessiontools

import "github.com/go-harness/harness"

// The codes only the session tools report, besides the shared ones of the
// harness package. Match one with errors.Is(err,
// sessiontools.CodeOutsideWorkspace) or by comparing a result's Code.
const (
	// CodeNoWorkspace: the calling session has no workspace to search.
	CodeNoWorkspace harness.Code = "no_workspace"
	// CodeOutsideWorkspace: the session belongs to another workspace.
	CodeOutsideWorkspace harness.Code = "outside_workspace"
)
