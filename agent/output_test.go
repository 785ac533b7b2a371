package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
)

type ReviewResult struct {
	Verdict string   `json:"verdict" jsonschema:"approve or reject"`
	Issues  []string `json:"issues"`
}

func answerReply(text string) openaitest.Reply {
	return openaitest.Reply{Chunks: []openaitest.Chunk{
		{Text: text}, {Finish: "stop"},
		{Usage: &harness.Usage{InputTokens: 10, OutputTokens: 5, CacheMissTokens: 10}},
	}}
}

// structuredLoop starts a loop on the fake endpoint in one dialect.
func structuredLoop(t *testing.T, d openai.Dialect, replies ...openaitest.Reply) (*openaitest.Server, *agent.Session, session.Store) {
	t.Helper()
	srv := openaitest.NewServer(replies...)
	t.Cleanup(srv.Close)
	m, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "key", Model: "test-model", Dialect: d})
	require.NoError(t, err)
	store := session.NewMemory(session.StoreConfig{})
	loop, err := agent.New(agent.WithModel(m), agent.WithStores(agent.Stores{Sessions: store}))
	require.NoError(t, err)
	t.Cleanup(func() { loop.Close() })
	s, err := loop.NewSession(context.Background(), session.Header{Cwd: "/ws"})
	require.NoError(t, err)
	return srv, s, store
}

func TestRunTyped(t *testing.T) {
	const valid = `{"verdict":"approve","issues":["none"]}`
	cases := []struct {
		name     string
		dialect  openai.Dialect
		replies  []string
		format   string // the response_format type sent
		wantCode harness.Code
		requests int
	}{
		{name: "valid", dialect: openai.DialectOpenAI, replies: []string{valid}, format: "json_schema", requests: 1},
		{name: "fenced valid", dialect: openai.DialectGeneric, replies: []string{"```json\n" + valid + "\n```"}, format: "json_schema", requests: 1},
		{name: "repaired once", dialect: openai.DialectOpenAI, replies: []string{`{"verdict":3}`, valid}, format: "json_schema", requests: 2},
		{name: "invalid twice", dialect: openai.DialectOpenAI, replies: []string{`{"verdict":3}`, `not json`}, format: "json_schema", wantCode: harness.CodeInvalidOutput, requests: 2},
		{name: "deepseek valid", dialect: openai.DialectDeepSeek, replies: []string{valid}, format: "json_object", requests: 1},
		{name: "deepseek repaired", dialect: openai.DialectDeepSeek, replies: []string{`{"issues":[]}`, valid}, format: "json_object", requests: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			var replies []openaitest.Reply
			for _, r := range tc.replies {
				replies = append(replies, answerReply(r))
			}
			srv, s, store := structuredLoop(t, tc.dialect, replies...)
			got, end, err := agent.RunTyped[ReviewResult](context.Background(), s, "review it")
			require.NotNil(t, end)
			reqs := srv.Requests()
			require.Len(t, reqs, tc.requests)
			for _, r := range reqs {
				rf, _ := r.JSON()["response_format"].(map[string]any)
				require.NotNil(t, rf, "every request asks for the format")
				assert.Equal(t, tc.format, rf["type"])
				if tc.format == "json_schema" {
					js, _ := rf["json_schema"].(map[string]any)
					assert.Equal(t, "review_result", js["name"])
					assert.Contains(t, mustJSON(js["schema"]), `"verdict"`)
				}
			}
			if tc.requests == 2 {
				last := reqs[1].Messages()
				text := mustJSON(last[len(last)-1])
				assert.Contains(t, text, "not valid against the review_result schema", "the repair request tells the model what failed")
			}
			if tc.wantCode != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantCode, harness.CodeOf(err))
				assert.Equal(t, session.ReasonError, end.Reason)
				assert.Nil(t, end.Output)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, ReviewResult{Verdict: "approve", Issues: []string{"none"}}, got)
			assert.JSONEq(t, valid, string(end.Output))
			// The raw answer text stays in the log.
			assert.Contains(t, mustJSON(s.Messages()), "approve")
			_ = store
		})
	}
}

// The repair reminder is an event and a log record; the session resumes
// with the same history, and a later plain turn asks for no format.
func TestRunOutputEventsAndResume(t *testing.T) {
	leakcheck.Check(t)
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)
	llm := replay.NewScripted(replay.Response{Text: `{"n":"x"}`}, replay.Response{Text: `{"n":2}`}, replay.Response{Text: "plain"})
	store := session.NewMemory(session.StoreConfig{})
	loop, s := newSession(t, agent.WithModel(llm), agent.WithStores(agent.Stores{Sessions: store}))
	var reminders []*agent.ReminderAdded
	var end *agent.TurnEnd
	for ev, err := range s.RunOutput(context.Background(), "count", model.Output{Name: "count", Schema: schema}) {
		require.NoError(t, err)
		switch e := ev.(type) {
		case *agent.ReminderAdded:
			reminders = append(reminders, e)
		case *agent.TurnEnd:
			end = e
		}
	}
	require.NotNil(t, end)
	assert.Equal(t, session.ReasonCompleted, end.Reason)
	assert.Equal(t, 2, end.Steps)
	assert.JSONEq(t, `{"n":2}`, string(end.Output))
	require.Len(t, reminders, 1)
	assert.Equal(t, "output_validation", reminders[0].Reminder.Source)
	reqs := llm.Requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		require.NotNil(t, r.Output)
		assert.Equal(t, "count", r.Output.Name)
		assert.JSONEq(t, string(schema), string(r.Output.Schema))
	}
	v, err := agent.OutputAs[struct{ N int }](end)
	require.NoError(t, err)
	assert.Equal(t, 2, v.N)
	b, err := agent.MarshalEvent(end)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"output":{"n":2}`)

	// A plain turn after it carries no output format.
	_, _, err = collectEnd(s, "again")
	require.NoError(t, err)
	require.Len(t, llm.Requests(), 3)
	assert.Nil(t, llm.Requests()[2].Output)

	// Resume rebuilds the same history, the repair reminder included.
	want := s.Messages()
	id := s.Header().ID
	require.NoError(t, s.Close())
	r, err := loop.ResumeSession(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, want, r.Messages())
	assert.Contains(t, mustJSON(r.Messages()), "not valid against the count schema")
}

func collectEnd(s *agent.Session, prompt string) ([]agent.Event, *agent.TurnEnd, error) {
	var evs []agent.Event
	var end *agent.TurnEnd
	var endErr error
	for ev, err := range s.Run(context.Background(), prompt) {
		evs = append(evs, ev)
		if te, ok := ev.(*agent.TurnEnd); ok {
			end, endErr = te, err
		}
	}
	return evs, end, endErr
}

func TestRunOutputBadSchema(t *testing.T) {
	_, s := newSession(t, agent.WithModel(replay.NewScripted(replay.Response{Text: "x"})))
	for _, schema := range []string{`not json`, `{"$ref":"#/nowhere"}`} {
		var endErr error
		for _, err := range s.RunOutput(context.Background(), "x", model.Output{Schema: json.RawMessage(schema)}) {
			endErr = err
		}
		assert.Equal(t, harness.CodeInvalidOutput, harness.CodeOf(endErr), schema)
	}
	_, err := agent.OutputAs[int](&agent.TurnEnd{})
	assert.Equal(t, harness.CodeInvalidOutput, harness.CodeOf(err))

	// Schemas whose checking could blow up are refused before the model
	// is called: nesting past the bound, and a chain of $refs that
	// each apply the next twice (2^30 schemas for one value).
	deep := strings.Repeat(`{"type":"array","items":`, 100) + `{}` + strings.Repeat(`}`, 100)
	var defs []string
	for i := range 30 {
		defs = append(defs, fmt.Sprintf(`"a%d":{"allOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"a30":{"type":"string"}`)
	expand := `{"$ref":"#/$defs/a0","$defs":{` + strings.Join(defs, ",") + `}}`
	for _, schema := range []string{deep, expand} {
		var endErr error
		for _, err := range s.RunOutput(context.Background(), "x", model.Output{Schema: json.RawMessage(schema)}) {
			endErr = err
		}
		assert.Equal(t, harness.CodeInvalidOutput, harness.CodeOf(endErr))
		assert.ErrorContains(t, endErr, "the output schema cannot be checked safely")
	}
}

// A typed turn that pauses for approval keeps asking for its answer when
// it is resolved: in the same process, and after resuming in a new loop
// (the schema is in the log), the continuation sends the output format,
// repairs an invalid answer against the same schema, and ends with
// TurnEnd.Output.
func TestRunOutputPausedThenResolved(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)
	for _, resume := range []bool{false, true} {
		t.Run(fmt.Sprintf("resume=%v", resume), func(t *testing.T) {
			ctx := context.Background()
			file := filepath.Join(t.TempDir(), "marks")
			first := replay.NewScripted(replay.Call(replay.ToolCall("c1", "mark", map[string]any{"text": "a"})))
			store := session.NewMemory(session.StoreConfig{})
			opts := func(m model.Model) []agent.Option {
				return []agent.Option{agent.WithModel(m), agent.WithTools(markTool(file)), agent.WithStores(agent.Stores{Sessions: store}),
					agent.WithPermissions(policy(t, permission.Rules{}))}
			}
			loop, s := newSession(t, opts(first)...)
			var end *agent.TurnEnd
			for ev, err := range s.RunOutput(ctx, "count", model.Output{Name: "count", Schema: schema}) {
				require.NoError(t, err)
				if te, ok := ev.(*agent.TurnEnd); ok {
					end = te
				}
			}
			require.NotNil(t, end)
			require.Equal(t, session.ReasonAwaitingApproval, end.Reason)
			_, err := agent.OutputAs[struct{ N int }](end)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "paused for approval")

			second := replay.NewScripted(replay.Response{Text: `{"n":"x"}`}, replay.Response{Text: `{"n":3}`})
			if resume {
				id := s.Header().ID
				require.NoError(t, s.Close())
				require.NoError(t, loop.Close())
				loop2, err := agent.New(opts(second)...)
				require.NoError(t, err)
				defer loop2.Close()
				s, err = loop2.ResumeSession(ctx, id)
				require.NoError(t, err)
			} else {
				require.NoError(t, s.SetModel(second))
			}
			require.Len(t, s.Pending(), 1)
			evs, err := runAll(s.Resolve(ctx, map[string]permission.Answer{"c1": {Allow: true}}))
			require.NoError(t, err)
			end = evs[len(evs)-1].(*agent.TurnEnd)
			assert.Equal(t, session.ReasonCompleted, end.Reason)
			assert.JSONEq(t, `{"n":3}`, string(end.Output), "the resolved turn ends with the structured answer")
			assert.Len(t, ofType[*agent.ReminderAdded](evs), 1, "the invalid answer got its one repair against the same schema")
			reqs := second.Requests()
			require.Len(t, reqs, 2)
			for _, r := range reqs {
				require.NotNil(t, r.Output, "the continuation asks for the answer")
				assert.Equal(t, "count", r.Output.Name)
				assert.JSONEq(t, string(schema), string(r.Output.Schema))
			}
			assert.Equal(t, []string{"a"}, marks(t, file))
		})
	}
}
