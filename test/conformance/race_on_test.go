//go:build race

package conformance

// raceEnabled: the race detector is on (see lmSizes).
const raceEnabled = true
