package encryption

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// env is kfake, local-kms with one key behind the aliases alias/kek,
// alias/teama/kek and alias/teamb/kek, and kproxy started from a
// configuration whose KMS endpoint is written ENDPOINT.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	kms     *localkms.Server
	kp      *testkit.Binary
}

func newEnv(t *testing.T, topics []string, cfg string) *env {
	t.Helper()
	return newEnvPartitions(t, 1, topics, cfg)
}

// newEnvPartitions is newEnv with topics of partitions partitions.
func newEnvPartitions(t *testing.T, partitions int32, topics []string, cfg string) *env {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "kproxy-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "kproxy-test-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	e := &env{t: t, kms: localkms.Start(t)}
	key := e.kms.CreateKey()
	for _, alias := range []string{"alias/kek", "alias/teama/kek", "alias/teamb/kek"} {
		e.kms.CreateAlias(alias, key)
	}
	e.cluster = testkit.Cluster(t, 1, kfake.SeedTopics(partitions, topics...))
	cfg = fmt.Sprintf("upstream: {bootstrap_servers: [%q]}\nadmin: {listen: \"127.0.0.1:0\"}\nlog: {level: info, format: json}\n", e.cluster.ListenAddrs()[0]) +
		strings.ReplaceAll(cfg, "ENDPOINT", e.kms.Endpoint())
	e.kp = advkit.Start(t, cfg)
	return e
}

// encryption is an encryption section encrypting every topic under key.
func encryption(key string) string {
	return "encryption:\n" +
		"  kms: {aws_kms: {endpoint: \"ENDPOINT\", region: " + localkms.Region + "}}\n" +
		"  topics: [{match: \"*\", key: \"" + key + "\", encrypt: [value, headers]}]\n"
}

// client is a client of addr.
func (e *env) client(addr string, opts ...kgo.Opt) *kgo.Client {
	return testkit.Client(e.t, append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RecordRetries(3)}, opts...)...)
}

// direct is a client of the cluster itself.
func (e *env) direct(opts ...kgo.Opt) *kgo.Client {
	return testkit.Client(e.t, append([]kgo.Opt{kgo.SeedBrokers(e.cluster.ListenAddrs()...)}, opts...)...)
}

// kmsCalls is kproxy's count of KMS calls of operation, 0 when none.
func (e *env) kmsCalls(operation string) float64 {
	var n float64
	for _, outcome := range []string{"ok", "key_unavailable", "retriable", "rejected"} {
		v, _ := testkit.ScrapeSeries(e.t, e.kp.Admin, fmt.Sprintf(`kproxy_encryption_kms_calls_total{operation=%q,outcome=%q}`, operation, outcome))
		n += v
	}
	return n
}
