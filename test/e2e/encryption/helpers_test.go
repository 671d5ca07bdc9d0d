// Package e2eencryption runs the kproxy binary with record encryption in
// front of a kfake cluster, with local-kms as the KMS.
package e2eencryption

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// env is a kfake cluster, local-kms, and kproxy encrypting in front of
// the cluster.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	kms     *localkms.Server
	kp      *testkit.Binary
	cfgPath string
}

// newEnv starts the cluster with topics, local-kms, and kproxy with the
// sections section (YAML, the KMS endpoint written as ENDPOINT; with
// virtual_clusters, their listeners too);
// setup creates the keys before kproxy starts.
func newEnv(t *testing.T, topics []string, section string, setup func(*localkms.Server)) *env {
	t.Helper()
	// kproxy reads the credentials from the environment, as in production.
	t.Setenv("AWS_ACCESS_KEY_ID", "kproxy-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "kproxy-test-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	e := &env{t: t, kms: localkms.Start(t)}
	if setup != nil {
		setup(e.kms)
	}
	e.cluster = testkit.Cluster(t, 1, kfake.SeedTopics(1, topics...))
	section = strings.ReplaceAll(section, "ENDPOINT", e.kms.Endpoint())
	text := testkit.Config{Upstream: e.cluster.ListenAddrs(), Admin: true, Log: "{level: info, format: json}", Extra: section}.YAML()
	if strings.Contains(section, "virtual_clusters:") { // their own listeners; no top-level ports
		text = fmt.Sprintf("upstream: {bootstrap_servers: [%q]}\nadmin: {listen: \"127.0.0.1:0\"}\nlog: {level: info, format: json}\n%s",
			e.cluster.ListenAddrs()[0], section)
	}
	e.cfgPath = testkit.WriteConfig(t, text)
	e.kp = testkit.RunBinary(t, testkit.SharedKproxy(t), e.cfgPath)
	e.kp.LogFilterOnFailure("encryption")
	return e
}

// section is an encryption section for local-kms with rules.
func section(rules string, more string) string {
	return fmt.Sprintf(`
encryption:
  kms:
    aws_kms: {endpoint: "ENDPOINT", region: %s}
  topics:
%s
%s`, localkms.Region, rules, more)
}

// proxied is a client of kproxy; direct one of the cluster itself.
func (e *env) proxied(opts ...kgo.Opt) *kgo.Client {
	return testkit.Client(e.t, append([]kgo.Opt{kgo.SeedBrokers(e.kp.Bootstrap)}, opts...)...)
}

func (e *env) direct(opts ...kgo.Opt) *kgo.Client {
	return testkit.Client(e.t, append([]kgo.Opt{kgo.SeedBrokers(e.cluster.ListenAddrs()...)}, opts...)...)
}

// marker is a record's envelope marker, parsed; ok false without one.
func marker(t *testing.T, r *kgo.Record) (envelope.Marker, bool) {
	t.Helper()
	for _, h := range r.Headers {
		if h.Key == envelope.HeaderName {
			m, err := envelope.ParseMarker(h.Value)
			if err != nil {
				t.Fatalf("record at %s/%d@%d: marker: %v", r.Topic, r.Partition, r.Offset, err)
			}
			return m, true
		}
	}
	return envelope.Marker{}, false
}

// ctx is a test's deadline for one step.
func (e *env) ctx() context.Context { return testkit.Context(e.t, 30*time.Second) }

// shreddedFetch consumes topic through the kproxy at bootstrap, whose KEK
// is gone, until a fetch fails: it must fail with INVALID_RECORD, the
// documented error, having handed over no record.
func shreddedFetch(t *testing.T, ctx context.Context, bootstrap, topic string) {
	t.Helper()
	cl := testkit.Client(t, kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic))
	var fetchErr error
	for fetchErr == nil && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if len(fs.Records()) > 0 {
			t.Fatalf("%s: a record under a KEK that is gone handed over: %q", topic, fs.Records()[0].Value)
		}
		fs.EachError(func(_ string, _ int32, err error) { fetchErr = err })
	}
	if !errors.Is(fetchErr, kerr.InvalidRecord) {
		t.Fatalf("%s: fetch of records under a KEK that is gone: %v, want INVALID_RECORD", topic, fetchErr)
	}
}
