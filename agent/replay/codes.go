package replay

import "github.com/go-harness/harness"

// codeReplayDrift (replay_drift) is the code only this package reports,
// besides the shared ones of the harness package: a replayed session's
// live request differs from the one recorded. Its text is public API like
// every code's: match it with errors.Is(err, harness.Code("replay_drift")).
const codeReplayDrift harness.Code = "replay_drift"
