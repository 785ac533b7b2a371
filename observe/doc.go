// Package observe traces and measures the agent loop with OpenTelemetry,
// named and attributed by the GenAI semantic conventions: a span per
// turn (invoke_agent), per model call (chat) and per tool call
// (execute_tool), nested under the turn; retries and reminders as events
// of the turn's span; the gen_ai.client.token.usage and
// gen_ai.client.operation.duration histograms, and tool call counts and
// durations by tool and outcome.
//
//	hooks, err := observe.New(observe.Config{TracerProvider: tp, MeterProvider: mp})
//	loop, err := agent.New(agent.WithHooks(hooks), agent.WithModel(m))
//
// New returns the loop's own hooks (agent.Hooks: a turn observer, model
// middleware and tool middleware), so a host that does not trace pays
// nothing, and one with hooks of its own orders them as it likes.
// Message content, tool arguments and results are sensitive and recorded
// only with Config.Content.
//
// It imports the OpenTelemetry API only (never the SDK), harness,
// agent, agent/model and tools; nothing in the module imports it.
package observe
