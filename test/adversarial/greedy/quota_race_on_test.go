//go:build race

package greedy

// quotaRaceEnabled: the race detector slows kproxy, kfake and the
// clients several times over, so on a loaded machine a client may not
// reach the quota it is measured against. Under it the attacks run
// shorter and only the upper bound (no more than the quota) is checked;
// the ±10% rates are measured without it:
//
//	go test -count=1 -run 'TestGreedy|TestPolite' ./test/adversarial/greedy/
const quotaRaceEnabled = true
