package persistent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/proctree"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shellkit"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// kit drives the persistent shell tools, and can look at the shells'
// state.
type kit struct {
	*shelltest.Shells
	st *sessionTools
}

// newKit builds the tools with the default configuration, changed by
// configure.
func newKit(t testing.TB, env *tools.Env, configure ...func(*shellkit.Config)) *kit {
	c := shellkit.Defaults()
	for _, f := range configure {
		f(c)
	}
	st := &sessionTools{cfg: c, key: &sessionsKey{}}
	ts := c.Checked(st.openTool(), st.sendTool(), st.readTool(), st.closeTool())
	_, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return &kit{Shells: shelltest.NewShells(t, env, ts), st: st}
}

// table returns the shell table of the kit's session.
func (k *kit) table() *shells {
	k.T.Helper()
	m, err := tools.LoadState(k.Env.State, k.st.key, func() *shells { return nil })
	require.NoError(k.T, err)
	require.NotNil(k.T, m, "the session has a shell table")
	return m
}

// pending returns how many bytes of output shell id holds that no call
// has returned yet.
func (k *kit) pending(id string) int64 {
	sh, err := k.table().get(id)
	require.NoError(k.T, err)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.window.Total()
}

// shellProc returns the running process of shell id.
func (k *kit) shellProc(id string) *proctree.Proc {
	k.T.Helper()
	sh, err := k.table().get(id)
	require.NoError(k.T, err)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	require.NotNil(k.T, sh.p, "shell %s runs no process", id)
	return sh.p
}

// grace sets the kill grace.
func grace(d time.Duration) func(*shellkit.Config) { return func(c *shellkit.Config) { c.Grace = d } }

// sandbox sets the sandbox.
func sandbox(sb shellkit.Sandbox) func(*shellkit.Config) {
	return func(c *shellkit.Config) { c.Sandbox = sb }
}
