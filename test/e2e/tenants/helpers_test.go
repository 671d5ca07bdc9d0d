// Package e2etenants drives virtual clusters end to end: one kproxy
// process (proxy.Run, as the kproxy command runs it) serving two tenants
// in front of one kfake cluster, franz-go clients whose only seed is their
// tenant's bootstrap listener, and checks of what reached the cluster
// asked of kfake directly. With KPROXY_KAFKA_BOOTSTRAP set (test/kafka's
// cluster.sh start prints it; CI sets it) the two-tenant scenario runs in
// front of that real Kafka cluster too.
package e2etenants

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// tenants are the two virtual clusters every test here serves.
var tenants = []string{"team-a", "team-b"}

// env is one test's kfake cluster and the kproxy serving both tenants.
type env struct {
	t       *testing.T
	brokers []string // the upstream's bootstrap addresses
	kp      *kproxytest.Kproxy
	config  string // the configuration kproxy started with
	audit   string // the audit.output file
	base    string // the file without its policies
}

// tenantConfig is the configuration file's text: both tenants with the
// documented prefixes on OS-chosen ports, each with a policy of its own
// (policies[i], YAML of a policy section, "" for none).
func tenantConfig(upstream, audit string, policies ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `upstream: {bootstrap_servers: [%q]}
listeners: {bind_host: 127.0.0.1}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
audit: {output: %q}
virtual_clusters:
`, upstream, audit)
	for i, name := range tenants {
		fmt.Fprintf(&b, `  - name: %s
    listeners: {bootstrap_port: 0, broker_port_base: 0}
    topic_prefix: "%[1]s."
    group_prefix: "%[1]s."
    transactional_id_prefix: "%[1]s."
    cluster_id: %[1]s-cluster
`, name)
		if i < len(policies) && policies[i] != "" {
			fmt.Fprintf(&b, "    policy: %s\n", policies[i])
		}
	}
	return b.String()
}

// newEnv starts kfake (brokers nodes) and kproxy serving both tenants with
// policies.
func newEnv(t *testing.T, brokers int, policies ...string) *env {
	t.Helper()
	return newEnvOn(t, testkit.Cluster(t, brokers).ListenAddrs(), policies...)
}

// newEnvOn starts kproxy serving both tenants with policies in front of
// the cluster at brokers.
func newEnvOn(t *testing.T, brokers []string, policies ...string) *env {
	t.Helper()
	e := &env{t: t, brokers: brokers}
	e.audit = filepath.Join(t.TempDir(), "audit.log")
	e.config = tenantConfig(brokers[0], e.audit, policies...)
	e.kp = kproxytest.Start(t, e.config, kproxytest.WithLog(io.Discard, zerolog.InfoLevel))
	return e
}

// client is a franz-go client of tenant whose only seed is its bootstrap
// listener.
func (e *env) client(tenant string, opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	return testkit.Client(e.t, append([]kgo.Opt{kgo.SeedBrokers(e.kp.VirtualClusterBootstrapAddr(tenant))}, opts...)...)
}

// upstream is a client of the cluster itself, bypassing kproxy.
func (e *env) upstream() *kgo.Client {
	e.t.Helper()
	return testkit.Client(e.t, kgo.SeedBrokers(e.brokers...))
}

func (e *env) metrics() string {
	_, body := testkit.HTTPGet(e.t, "http://"+e.kp.AdminAddr()+"/metrics")
	return body
}

// auditLines are the audit file's lines so far.
func (e *env) auditLines() []string {
	data, err := os.ReadFile(e.audit)
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	return strings.FieldsFunc(string(data), func(r rune) bool { return r == '\n' })
}

// createTopic creates topic with partitions through tenant's listener.
func (e *env) createTopic(ctx context.Context, tenant, topic string, partitions int32) {
	e.t.Helper()
	// -1: the cluster's default replication factor (3 on test/kafka's,
	// whose min.insync.replicas 2 refuses acks=all to one replica).
	resp, err := kadm.NewClient(e.client(tenant)).CreateTopic(ctx, partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		e.t.Fatalf("%s: create topic %s: %v", tenant, topic, err)
	}
}
