//go:build race

package e2equotas

// raceEnabled: the race detector slows clients, kproxy and kfake several
// times over, so on a loaded machine a client may not reach the quota it
// is measured against; rates are measured without it (.ci/run runs
// TestProduceAndFetchQuotas again without -race).
const raceEnabled = true
