package hooks_test

import (
	"context"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// toolNamed is a tool without side effects that answers "ok".
func toolNamed(name string) tools.Tool {
	return tools.Define(tools.Spec{Name: name, Description: "A tool."},
		func(ctx context.Context, call *tools.Call, _ map[string]any) (*harness.ToolResult, error) {
			return harness.TextResult("ok"), nil
		})
}

// failingTool always fails.
func failingTool() tools.Tool {
	return tools.Define(tools.Spec{Name: "fails", Description: "Fails."},
		func(ctx context.Context, call *tools.Call, _ struct{}) (*harness.ToolResult, error) {
			return nil, &harness.Error{Code: harness.CodeToolFailed, Message: "it broke"}
		})
}

// writeTool stands for write: it writes nothing.
func writeTool() tools.Tool {
	type in struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	return tools.Define(tools.Spec{Name: "write", Description: "Write a file."},
		func(ctx context.Context, call *tools.Call, a in) (*harness.ToolResult, error) {
			return harness.TextResult("wrote " + a.FilePath), nil
		})
}

// approve is an approver that records the reasons it was asked for and
// answers allow.
func approve(asked *[]string, allow bool) permission.Approver {
	return func(ctx context.Context, req permission.Request) (permission.Answer, error) {
		*asked = append(*asked, req.Decision.Reason)
		return permission.Answer{Allow: allow}, nil
	}
}
