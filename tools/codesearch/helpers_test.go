package codesearch_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
)

// rig runs the search tools the way the loop does.
type rig struct {
	t   testing.TB
	env *tools.Env
	reg *tools.Registry
}

// newRig registers the tools with the configuration given, or the
// default.
func newRig(t testing.TB, fsys fs.FileSystem, cfg ...codesearch.Config) *rig {
	var c codesearch.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	reg, err := tools.NewRegistry(codesearch.Tools(c)...)
	require.NoError(t, err)
	state := &tools.State{}
	t.Cleanup(func() { state.Close() })
	return &rig{t: t, reg: reg, env: &tools.Env{Cwd: fsimpl.RootOf(fsys), FS: fsys, State: state}}
}

func (r *rig) call(ctx context.Context, name string, args map[string]any) *harness.ToolResult {
	raw, err := json.Marshal(args)
	require.NoError(r.t, err)
	c := &tools.Call{ID: "t", Name: name, Arguments: string(raw), Env: r.env}
	if res := r.reg.Check(c); res != nil {
		return res
	}
	return toolexec.Executor()(ctx, c)
}

func (r *rig) run(name string, args map[string]any) *harness.ToolResult {
	return r.call(context.Background(), name, args)
}

func (r *rig) ok(name string, args map[string]any) string {
	res := r.run(name, args)
	require.False(r.t, res.IsError, "%s %v: %s", name, args, res.Text())
	return res.Text()
}
