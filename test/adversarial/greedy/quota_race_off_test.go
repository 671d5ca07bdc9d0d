//go:build !race

package greedy

// quotaRaceEnabled: see quota_race_on_test.go.
const quotaRaceEnabled = false
