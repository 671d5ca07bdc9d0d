//go:build race

package records_test

// raceDetector: the race detector makes sync.Pool (which the lz4 codec
// uses for its block buffers) drop items at random, so allocation counts
// are not the product's under it.
const raceDetector = true
