// Package modeltest is the conformance suite for model.Model
// implementations: what a provider adapter must do for the loop to rely
// on it, checked on the adapter itself, as fs/fstest checks a
// FileSystem and session/sessiontest a session store.
//
// [TestModel] runs the checks as subtests of t:
//
//	func TestConformance(t *testing.T) {
//		modeltest.TestModel(t, func(t *testing.T) model.Model {
//			srv := newFakeBackend(t) // answers every request with a short reply
//			return myadapter.New(srv.URL)
//		})
//	}
//
// The suite asks only for what the contract promises, whatever the
// answer says:
//
//   - The answer of a plain request ends with one finish chunk, and
//     nothing comes after it.
//   - Chunks are well formed: a signature or the redacted mark only on
//     reasoning, a model chunk only first.
//   - An error is yielded once and ends the sequence.
//   - A cancelled context ends the call with an error whose
//     harness.CodeOf is aborted.
//   - A consumer that stops early, or a cancelled call, leaves no
//     goroutine behind.
//   - The request is not changed.
//   - Info names the model and hands out a copy.
//   - Concurrent calls are safe (run it with -race).
//
// Retrying is the loop's job, so the suite does not check it.
//
// A double for tests of code that takes a Model is replay.NewScripted.
// The suite passes on it, on model.Fallback, on the OpenAI-compatible
// adapter against openaitest's endpoint and on the Anthropic adapter
// against anthropictest's.
//
// It imports harness, agent/model and internal/leakcheck; nothing of the
// loop, the tools or the session.
package modeltest
