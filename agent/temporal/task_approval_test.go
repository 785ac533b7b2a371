package temporal_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/agent"
	temporal "github.com/go-harness/harness/agent/temporal"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

// A sub-agent's call that needs approval pauses the sub-agent's turn,
// a child workflow: the host finds it through the parent's Status
// (Tasks) or Client.Task, and answers it there, as it answers the
// parent's. The parent then reads the sub-agent's answer.
func TestSubAgentApprovalGoesThroughTheClient(t *testing.T) {
	pol, err := permission.New(permission.Rules{Allow: []string{"task"}, Ask: []string{"record_effect"}})
	require.NoError(t, err)
	f := newFixture(t, agent.WithPermissions(pol), agent.WithSubAgents(agent.SubAgents{Types: []agent.AgentType{{
		Name: "helper", Description: "Records effects.", Tools: []string{"record_effect"},
	}}}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := randomName("s-")
	turn, err := f.tc.Start(ctx, temporal.TurnInput{SessionID: id, Create: &session.Header{Cwd: "/ws"}, Prompt: "task sleep=0"})
	require.NoError(t, err)
	st := waitState(t, ctx, turn, temporal.StatePaused)
	for len(st.Tasks) == 0 {
		time.Sleep(50 * time.Millisecond)
		st = waitState(t, ctx, turn, temporal.StatePaused)
	}
	require.Equal(t, session.ReasonAwaitingTool, st.Pause.Reason)
	call := st.Pause.Tools[0]
	child := f.tc.Task(id, call.ID)
	assert.Equal(t, []string{child.WorkflowID}, st.Tasks)

	cst := waitState(t, ctx, child, temporal.StatePaused)
	require.NotNil(t, cst.Pause)
	assert.Equal(t, session.ReasonAwaitingApproval, cst.Pause.Reason)
	require.Len(t, cst.Pause.Approvals, 1)
	req := cst.Pause.Approvals[0]
	assert.Equal(t, "record_effect", req.Call.Name)
	_, statErr := os.Stat(f.effects)
	assert.True(t, os.IsNotExist(statErr), "nothing ran while the sub-agent waits")
	assert.Equal(t, temporal.StatePaused, must(turn.Status(ctx)).State, "the parent waits for its sub-agent")

	require.NoError(t, child.Answer(ctx, agent.Answers{Approvals: map[string]permission.Answer{req.Call.ID: {Allow: true}}}))
	res, err := turn.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, session.ReasonCompleted, res.Reason)
	assert.Equal(t, "done: done: 1 results, 0 outcome unknown", res.Answer)
	b, err := os.ReadFile(f.effects)
	require.NoError(t, err)
	assert.Equal(t, agent.TaskSessionID(id, call.ID)+" "+req.Call.ID+"\n", string(b), "the sub-agent's call ran once, in its own session")
	cres, err := child.Wait(ctx)
	require.NoError(t, err)
	require.NotNil(t, cres.Tool)
	assert.Positive(t, cres.Tool.Usage.InputTokens, "the sub-agent's spend goes to the parent")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
