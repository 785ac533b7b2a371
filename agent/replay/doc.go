// Package replay provides models for tests that need no network and no
// key.
//
// Both are model.Model implementations (package agent/model).
//
// [Scripted] answers from a queue of canned [Response] values and keeps
// the requests it received, for unit tests of tools, hosts and the loop.
//
// [Model] replays the answers of a recorded session log call by call. Each
// recorded call carries a fingerprint of the request the model received;
// with [WithStrict], a live request that drifted from the recording (a changed
// system prompt, tool schema or history) fails with an error matching
// harness.CodeReplayDrift whose [DriftError] cause names the call, its
// step and the part that changed — where replay harnesses that match
// calls by position alone would carry on answering questions that were
// never asked.
//
// It imports harness, agent/model, session (to read recordings) and
// internal helpers; nothing of agent.
package replay
