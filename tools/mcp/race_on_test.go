//go:build race

package mcp_test

// raceEnabled is set when the race detector runs: the tests that move
// tens of MiB keep to their main case then, which the detector makes
// many times slower.
const raceEnabled = true
