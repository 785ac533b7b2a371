// Package replay provides models for tests that need no network and no
// key.
//
// [Scripted] answers from a queue of canned [Response] values and keeps
// the requests it received, for unit tests of tools, hosts and the loop.
//
// [Model] replays the answers of a recorded session log call by call. Each
// recorded call carries a fingerprint of the request the model received;
// with [Strict], a live request that drifted from the recording (a changed
// system prompt, tool schema or history) fails with a [DriftError] that
// names the call, its step and the part that changed — where replay
// harnesses that match calls by position alone would carry on answering
// questions that were never asked.
package replay
