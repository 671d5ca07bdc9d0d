//go:build race

package policy

// raceDetector: the race detector makes sync.Pool drop items at random,
// so allocation counts are not the product's under it.
const raceDetector = true
