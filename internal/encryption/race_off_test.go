//go:build !race

package encryption

const raceEnabled = false
