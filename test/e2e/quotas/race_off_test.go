//go:build !race

package e2equotas

const raceEnabled = false
