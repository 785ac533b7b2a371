package longtest

import "os"

// Env is the environment variable that asks for the full runs.
const Env = "HARNESS_LONG_TESTS"

// Enabled reports whether the full runs were asked for (Env is "1").
func Enabled() bool { return os.Getenv(Env) == "1" }

// Pick returns full when the full runs were asked for, and short
// otherwise: a trial count, an input size, a duration.
func Pick[T any](short, full T) T {
	if Enabled() {
		return full
	}
	return short
}
