//go:build race

package images

// raceEnabled reports a build with the race detector, whose memory
// overhead makes peak-RSS measurements meaningless.
const raceEnabled = true
