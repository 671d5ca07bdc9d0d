//go:build !race

package records_test

const raceDetector = false
