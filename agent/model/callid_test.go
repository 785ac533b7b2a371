package model_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
)

func TestFixCallIDs(t *testing.T) {
	call := func(id string) harness.Block {
		return harness.Block{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: id, Name: "read"}}
	}
	msg := harness.Message{Role: harness.RoleAssistant, Content: []harness.Block{
		harness.TextBlock("looking"), call("call_0"), call(""), call("call_0"), call("fresh"), call("call_t2_s3_4"),
	}}
	used := map[string]bool{"call_0": true, "call_t2_s3_0": true}
	model.FixCallIDs(msg, 2, 3, func(id string) bool { return used[id] })
	var ids []string
	for _, b := range msg.Content[1:] {
		ids = append(ids, b.ToolCall.ID)
	}
	// call_0 is used by the session: renamed, and call_t2_s3_0 is taken too.
	// The empty id gets its position; the repeated call_0 its own; fresh is
	// kept; a provider id that looks like ours but is new is kept too.
	assert.Equal(t, []string{"call_t2_s3_0_2", "call_t2_s3_1", "call_t2_s3_2", "fresh", "call_t2_s3_4"}, ids)
	assert.Equal(t, "looking", msg.Content[0].Text)
}
