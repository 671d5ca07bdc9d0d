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
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kproxy/kproxy/internal/testkit"
)

// build is the one kproxy binary of this test process.
type build struct {
	once sync.Once
	path string
	err  string
}

var binary build // built on first use; read-only after

// Binary is the path of cmd/kproxy built once for this test process.
func Binary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "kproxy-adversarial-")
		if err != nil {
			binary.err = err.Error()
			return
		}
		// A throwaway testing.TB would not do: BuildKproxy fails its
		// caller, so build through the first caller and keep the path.
		binary.path = filepath.Join(dir, "kproxy")
		if out, err := testkit.GoBuild(binary.path); err != nil {
			binary.err = err.Error() + "\n" + out
		}
	})
	if binary.err != "" {
		t.Fatalf("build kproxy: %s", binary.err)
	}
	return binary.path
}

// Start runs the real kproxy binary with the configuration cfg (YAML text)
// and waits until it is ready. It is stopped when the test ends.
func Start(t testing.TB, cfg string) *testkit.Binary {
	t.Helper()
	kp := testkit.RunBinary(t, Binary(t), testkit.WriteConfig(t, cfg))
	kp.WaitReady()
	return kp
}

// Kfake starts an n-node kfake cluster on loopback and returns its
// bootstrap addresses.
func Kfake(t testing.TB, n int) []string {
	t.Helper()
	return testkit.Cluster(t, n).ListenAddrs()
}

// RealKafka is the real cluster's bootstrap addresses from
// KPROXY_KAFKA_BOOTSTRAP (test/kafka/cluster.sh start prints it; CI sets
// it); the test skips without it.
func RealKafka(t testing.TB) []string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv("KPROXY_KAFKA_BOOTSTRAP"))
	if v == "" {
		t.Skip("no real Kafka cluster: set KPROXY_KAFKA_BOOTSTRAP (test/kafka/cluster.sh start prints it; CI sets it)")
	}
	return strings.Split(v, ",")
}
