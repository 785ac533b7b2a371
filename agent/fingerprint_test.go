package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/fingerprint"
	"github.com/go-harness/harness/session"
)

func TestChainCacheMatchesFullFingerprint(t *testing.T) {
	h := &session.History{}
	var c chainCache
	req := func() *model.Request {
		return &model.Request{System: "s", Messages: h.Messages(), Tools: []model.Tool{{Name: "a", Parameters: []byte(`{}`)}}}
	}
	add := func(p session.Payload) { h.Add(session.Event{Data: p}) }
	add(&session.UserMessage{Content: []harness.Block{harness.TextBlock("hi")}})
	add(&session.AssistantMessage{Content: []harness.Block{{Type: harness.BlockToolCall, ToolCall: &harness.ToolCall{ID: "1", Name: "a"}}}})
	r := req()
	assert.Equal(t, fingerprint.Request(r), c.fingerprint(r), "pending slot")
	add(&session.ToolFinished{CallID: "1", Result: *harness.TextResult("done")})
	r = req()
	assert.Equal(t, fingerprint.Request(r), c.fingerprint(r), "the filled slot is rehashed")
	add(&session.Reminded{Reminder: harness.Reminder{Text: "x"}})
	r = req()
	assert.Equal(t, fingerprint.Request(r), c.fingerprint(r))
	r.Messages = r.Messages[:2]
	assert.Equal(t, fingerprint.Request(r), c.fingerprint(r), "shorter history")
	r2 := req()
	r2.Messages[0] = harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("changed")}}
	assert.Equal(t, fingerprint.Request(r2), c.fingerprint(r2), "a replaced message is rehashed")
}
