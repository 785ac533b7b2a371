package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
	"github.com/go-harness/harness/tools/files"
	"github.com/go-harness/harness/tools/shell"
)

// File tools without a file system are a configuration error of New,
// which names the tools and what to wire, not a failure the model meets
// on every call.
func TestNewRefusesFileToolsWithoutFileSystem(t *testing.T) {
	m := replay.NewScripted(replay.Response{Text: "done"})
	_, err := agent.New(agent.WithModel(m), agent.WithTools(files.Tools(files.Config{})...), agent.WithTools(codesearch.Tools(codesearch.Config{})...))
	require.Error(t, err)
	var he *harness.Error
	require.True(t, errors.As(err, &he))
	require.Equal(t, harness.CodeInvalidOption, he.Code)
	require.Contains(t, err.Error(), "read, write, edit, glob, grep work in a file system and the loop has none")
	require.Contains(t, err.Error(), "agent.WithStores(agent.Stores{Files: fsys})")
	require.Contains(t, err.Error(), "fslocal.New(workspace)")

	// With a file system the same tools are accepted.
	loop, err := agent.New(agent.WithModel(m), agent.WithTools(files.Tools(files.Config{})...),
		agent.WithStores(agent.Stores{Files: fstest.NewMemFS("/work")}))
	require.NoError(t, err)
	loop.Close()

	// Tools that need none are accepted without one.
	loop, err = agent.New(agent.WithModel(m), agent.WithTools(echoTool()))
	require.NoError(t, err)
	loop.Close()
}

// staticSource is a tool source that never changes.
type staticSource []tools.Tool

func (s staticSource) Tools() []tools.Tool { return s }
func (s staticSource) Generation() uint64  { return 1 }

func TestNewRefusesFileToolsOfASourceWithoutFileSystem(t *testing.T) {
	m := replay.NewScripted(replay.Response{Text: "done"})
	_, err := agent.New(agent.WithModel(m), agent.WithToolSource(staticSource{files.Read(files.Config{})}))
	require.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err))
	require.Contains(t, err.Error(), "read work in a file system")
}

// A relative working directory is refused, not resolved against the
// process's directory or the file system's root.
func TestNewSessionRefusesRelativeCwd(t *testing.T) {
	loop, err := agent.New(agent.WithModel(replay.NewScripted(replay.Response{Text: "done"})),
		agent.WithStores(agent.Stores{Files: fstest.NewMemFS("/work")}))
	require.NoError(t, err)
	defer loop.Close()
	ctx := context.Background()
	for _, cwd := range []string{"project", "./project", "../up", "."} {
		_, err := loop.NewSession(ctx, session.Header{Cwd: cwd})
		require.Error(t, err, cwd)
		require.Equal(t, harness.CodeInvalidPath, harness.CodeOf(err), cwd)
		require.Contains(t, err.Error(), "is relative; give an absolute path", cwd)
	}
	s, err := loop.NewSession(ctx, session.Header{Cwd: "/project/sub"})
	require.NoError(t, err)
	require.Equal(t, "/project/sub", s.Header().Cwd)
	s.Close()
	s, err = loop.NewSession(ctx, session.Header{})
	require.NoError(t, err)
	require.Equal(t, "/work", s.Header().Cwd)
	s.Close()
}

// bash runs programs in a directory on disk: beside an in-memory file
// system it could never run, and New says so to the host instead of the
// model reading "the directory does not exist" on every call.
func TestNewRefusesBashOverAnInMemoryFileSystem(t *testing.T) {
	m := replay.NewScripted(replay.Response{Text: "done"})
	mem := agent.WithStores(agent.Stores{Files: fstest.NewMemFS("/project")})
	for _, ts := range [][]tools.Tool{{shell.Bash(shell.Config{})}, shell.Tools(shell.Config{})} {
		_, err := agent.New(agent.WithModel(m), mem, agent.WithTools(ts...))
		require.Equal(t, harness.CodeInvalidOption, harness.CodeOf(err))
		require.Contains(t, err.Error(), "run programs in a directory on disk, and the loop's file system")
		require.Contains(t, err.Error(), "fslocal.New(workspace)")
	}
	_, err := agent.New(agent.WithModel(m), mem, agent.WithTools(shell.Tools(shell.Config{})...))
	require.Contains(t, err.Error(), "bash, shell_open run programs")

	// On disk, or without a file system (the session's Cwd), bash is accepted.
	disk, err := fslocal.New(t.TempDir())
	require.NoError(t, err)
	defer disk.Close()
	for _, opt := range []agent.Option{agent.WithStores(agent.Stores{Files: disk}), nil} {
		loop, err := agent.New(agent.WithModel(m), opt, agent.WithTools(shell.Bash(shell.Config{})))
		require.NoError(t, err)
		loop.Close()
	}
}
