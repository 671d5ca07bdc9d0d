//go:build race

package encryption

// raceEnabled: the race detector changes what allocates (append of a
// make is no longer fused), so allocation bounds are measured without it.
const raceEnabled = true
