// Package replay provides a model for tests that needs no network and no
// key.
//
// [Model] is a model.Model implementation (package agent/model) that
// answers from a queue of responses and keeps the requests it received.
// Two constructors fill the queue.
//
// [NewScripted] queues canned [Response] values, for unit tests of
// tools, hosts and the loop.
//
// [New] and [NewStrict] queue the answers of a recorded session log,
// call by call. Each recorded call carries a fingerprint of the request
// the model received.
//
// Under [NewStrict], a live request that drifted from the recording (a
// changed system prompt, tool schema or history) fails with an error
// matching [harness.CodeReplayDrift]. The error names the call, its step
// and the part that changed. A replay that matched calls by position
// alone would carry on answering questions that were never asked.
//
// It imports harness, agent/model, session (to read recordings) and
// internal helpers; nothing of agent.
package replay
