// Package longtest says how much work a randomized or large-input test
// does: a small amount by default, so that go test ./... stays around a
// minute, and the full amount when HARNESS_LONG_TESTS=1 (as CI sets it).
//
// The default run still exercises every path such a test checks; the
// long run repeats it more often or with bigger inputs, to catch what
// only shows up rarely. Nothing here skips a test.
//
// It imports only the standard library; only tests import it.
package longtest
