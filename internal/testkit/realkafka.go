package testkit

import (
	"os"
	"strings"
	"testing"
)

// RealKafkaBootstrap is the bootstrap list of the real Kafka cluster
// KPROXY_KAFKA_BOOTSTRAP names (test/kafka/cluster.sh start prints it; CI
// sets it), or nil when it names none.
func RealKafkaBootstrap() []string {
	var out []string
	for _, a := range strings.Split(os.Getenv("KPROXY_KAFKA_BOOTSTRAP"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// RealKafka is RealKafkaBootstrap for a test that needs the real cluster:
// the test skips without it.
func RealKafka(t testing.TB) []string {
	t.Helper()
	brokers := RealKafkaBootstrap()
	if brokers == nil {
		t.Skip("no real Kafka cluster: set KPROXY_KAFKA_BOOTSTRAP (test/kafka/cluster.sh start prints it; CI sets it)")
	}
	return brokers
}
