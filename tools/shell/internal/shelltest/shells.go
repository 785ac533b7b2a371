package shelltest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// Shells drives the persistent shell tools of a tool set by name, as a
// model would.
type Shells struct {
	T                       testing.TB
	Env                     *tools.Env
	Open, Send, Read, Close tools.Tool
}

// NewShells finds the persistent shell tools in ts; env must be one of
// Env's, whose log tells the shells' pids.
func NewShells(t testing.TB, env *tools.Env, ts []tools.Tool) *Shells {
	return &Shells{T: t, Env: env, Open: Named(t, ts, "shell_open"), Send: Named(t, ts, "shell_send"),
		Read: Named(t, ts, "shell_read"), Close: Named(t, ts, "shell_close")}
}

// OpenShell opens a shell and returns its id and the pid of its bash
// (as the host sees it), which the shell_open record of the log holds.
func (k *Shells) OpenShell(args map[string]any) (string, int) {
	k.T.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res := Run(k.T, context.Background(), k.Open, k.Env, args)
	require.False(k.T, res.IsError, res.Text())
	require.Contains(k.T, res.Text(), "[containment: ")
	id := ShellIDRE.FindStringSubmatch(res.Text())
	require.NotNil(k.T, id, res.Text())
	pid := 0
	for _, r := range RecordsOf(k.T, k.Env).All() {
		var rec struct {
			SessionID string `json:"session_id"`
			PID       int    `json:"pid"`
		}
		if r.Name == "shell_open" && json.Unmarshal(r.Data, &rec) == nil && rec.SessionID == id[1] {
			pid = rec.PID
		}
	}
	require.NotZero(k.T, pid, "the log holds the pid of shell %s", id[1])
	Remember(pid)
	return id[1], pid
}

// Do runs command in shell id, waiting waitMS when given.
func (k *Shells) Do(id, command string, waitMS ...int) *harness.ToolResult {
	k.T.Helper()
	args := map[string]any{"session_id": id, "command": command}
	if len(waitMS) > 0 {
		args["wait_ms"] = waitMS[0]
	}
	return Run(k.T, context.Background(), k.Send, k.Env, args)
}

// ReadOut reads what shell id printed, waiting waitMS when given.
func (k *Shells) ReadOut(id string, waitMS ...int) *harness.ToolResult {
	k.T.Helper()
	args := map[string]any{"session_id": id}
	if len(waitMS) > 0 {
		args["wait_ms"] = waitMS[0]
	}
	return Run(k.T, context.Background(), k.Read, k.Env, args)
}
