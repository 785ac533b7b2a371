package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools/shell"
)

// An undo: the last turn's changes, made through bash, are taken back,
// and the conversation goes on in a fork from before that turn.
func ExampleSession_Rewind() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("keep me\n"), 0o644)
	workspace, _ := fslocal.New(dir)
	defer workspace.Close()

	model := replay.NewScripted(
		replay.Call(replay.ToolCall("c1", "bash", map[string]any{"command": "rm notes.txt && echo oops > oops.txt"})),
		replay.Response{Text: "Cleaned up."},
	)
	loop, err := agent.New(
		agent.WithModel(model),
		agent.WithTools(shell.Bash(shell.Config{})),
		agent.WithStores(agent.Stores{Sessions: session.NewMemory(session.StoreConfig{}), Files: workspace, Attachments: attachments.NewMemory()}),
		agent.WithCheckpoints(checkpoint.Config{}),
	)
	if err != nil {
		panic(err)
	}
	defer loop.Close()
	sess, _ := loop.NewSession(ctx, session.Header{Cwd: dir})
	for range sess.Run(ctx, "tidy the workspace") {
	}

	undo := agent.RewindTarget{Turn: agent.LastTurn}
	dry, _ := sess.Rewind(ctx, undo, agent.RewindOptions{DryRun: true})
	for _, c := range dry.Files.Changes {
		fmt.Printf("would undo: %s %s\n", c.Path, c.Op)
	}
	res, err := sess.Rewind(ctx, undo, agent.RewindOptions{})
	if err != nil {
		panic(err)
	}
	defer res.Fork.Close()
	data, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
	fmt.Printf("notes.txt: %q\n", data)
	fmt.Println("the fork's messages:", len(res.Fork.Messages()), "- its parent:", res.Fork.Header().Parent == sess.Header().ID)
	// Output:
	// would undo: notes.txt deleted
	// would undo: oops.txt created
	// notes.txt: "keep me\n"
	// the fork's messages: 0 - its parent: true
}
