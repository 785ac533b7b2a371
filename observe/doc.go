// Package observe traces and measures the agent loop with OpenTelemetry,
// named and attributed by the GenAI semantic conventions: a span per
// turn (invoke_agent), per model call (chat) and per tool call
// (execute_tool), nested under the turn; retries and reminders as events
// of the turn's span; the gen_ai.client.token.usage and
// gen_ai.client.operation.duration histograms, and tool call counts and
// durations by tool and outcome.
//
//	obs, err := observe.New(observe.WithTracerProvider(tp), observe.WithMeterProvider(mp))
//	loop := agent.New(append(obs.Options(), agent.WithModel(m))...)
//
// It plugs in through the loop's own hooks (agent.WithHooks: a turn
// observer, model middleware and tool middleware), so a host that does
// not trace pays nothing. Message content, tool arguments and results
// are sensitive and recorded only with WithContent.
//
// It imports the OpenTelemetry API only (never the SDK), harness,
// agent, agent/model and tools; nothing in the module imports it.
package observe
