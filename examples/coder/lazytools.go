package main

import (
	"context"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// lazyGroup is a group of tools built together (one constructor returns
// them all) whose specs do not depend on the run: toolspecs_gen.go holds
// them, written from the tools themselves by
//
//	go test -run TestToolSpecsGenerated -update
//
// and checked against them by the same test. A start then builds no
// argument schema by reflection for these tools; a group is built at the
// first call of one of its tools, which most turns never make.
type lazyGroup struct {
	specs []tools.Spec
	build func() []tools.Tool
}

// tools returns the group's tools, built at the first call of any.
func (g lazyGroup) tools() []tools.Tool {
	built := sync.OnceValue(g.build)
	out := make([]tools.Tool, len(g.specs))
	for i, s := range g.specs {
		out[i] = &lazyTool{spec: s, built: built, i: i}
	}
	return out
}

// lazyTool is one tool of a lazyGroup: its spec is known, the tool is
// built when it is first called.
type lazyTool struct {
	spec  tools.Spec
	built func() []tools.Tool
	i     int
}

func (t *lazyTool) Spec() tools.Spec { return t.spec }

func (t *lazyTool) Execute(ctx context.Context, call *tools.Call) (*harness.ToolResult, error) {
	tl := t.built()[t.i]
	if v, ok := tl.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return tl.Execute(ctx, call)
}
