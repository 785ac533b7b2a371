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

// lineChecks makes shell id check its stdout and stderr in each command
// line, as it does where the harness cannot look at them in /proc.
func (k *kit) lineChecks(id string) {
	k.T.Helper()
	sh, err := k.table().get(id)
	require.NoError(k.T, err)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.closeFDsLocked()
}

// looksFromOutside reports whether the harness looks at shell id's
// stdout and stderr in /proc.
func (k *kit) looksFromOutside(id string) bool {
	k.T.Helper()
	sh, err := k.table().get(id)
	require.NoError(k.T, err)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.fds != nil
}

// fdModes are the two ways a shell learns where its stdout and stderr
// lead; setup switches a shell to the mode.
var fdModes = []struct {
	name  string
	setup func(k *kit, id string)
}{
	{"harness looks in proc", func(k *kit, id string) {
		if !k.looksFromOutside(id) {
			k.T.Skip("the harness cannot look at the shell's descriptors here")
		}
	}},
	{"line checks", func(k *kit, id string) { k.lineChecks(id) }},
}
