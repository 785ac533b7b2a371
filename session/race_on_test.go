//go:build race

package session_test

// raceEnabled slows nothing down by itself; tests use it to keep their
// data small when the race detector makes every step slower.
const raceEnabled = true
