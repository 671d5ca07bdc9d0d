// Package advkit is the adversarial suites' shared harness: the real kproxy
// binary, built once per test process, started from a configuration file's
// text in front of a kfake cluster (or the real Kafka cluster CI starts),
// and raw Kafka connections an attacker drives byte by byte.
//
// Each attacker is a package of its own under test/adversarial/ (tenant,
// token, network, greedy, lowpriv); what they share lives here, so that an
// attack reads as the attacker's steps and the answer the reference (Apache
// Kafka's broker, the RFC) would give.
package advkit

import (
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
)

// Start runs the real kproxy binary with the configuration cfg (YAML text)
// and waits until it is ready. It is stopped when the test ends.
func Start(t testing.TB, cfg string) *testkit.Binary {
	t.Helper()
	kp := testkit.RunBinary(t, testkit.SharedKproxy(t), testkit.WriteConfig(t, cfg))
	kp.WaitReady()
	return kp
}

// Kfake starts an n-node kfake cluster on loopback and returns its
// bootstrap addresses.
func Kfake(t testing.TB, n int) []string {
	t.Helper()
	return testkit.Cluster(t, n).ListenAddrs()
}
