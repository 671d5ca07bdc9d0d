// Package e2equotas drives kproxy's quotas end to end: a real kfake
// cluster, kproxy terminating SASL for several users with quota rules, and
// franz-go clients that produce and consume as fast as they can. What the
// clients measure (rates, throttle times reported by the client's own
// hook) and what reached the cluster (asked of kfake directly) are the
// evidence.
package e2equotas

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// env is one test's cluster and kproxy.
type env struct {
	t       *testing.T
	cluster *kfake.Cluster
	proxy   *kproxytest.Kproxy
	reg     prometheus.Gatherer // kproxy's metrics, the quotas' among them
	// audit holds the quota audit lines, every one once proxy has stopped.
	audit kproxytest.AuditFile
}

// users are the SASL users every test's kproxy knows (password: NAME-secret).
var users = []string{"alice", "bob", "carol", "dave", "erin"}

// newEnv starts a 3-broker kfake cluster with topics (3 partitions each)
// and kproxy in front of it, terminating SASL for users, with policyYAML
// (a policy section holding the quotas).
func newEnv(t *testing.T, topics []string, policyYAML string) *env {
	t.Helper()
	c := testkit.Cluster(t, 3, kfake.SeedTopics(3, topics...))
	var creds []string
	for _, u := range users {
		cred, err := auth.HashPassword(auth.ScramSHA512, u+"-secret", 4096)
		if err != nil {
			t.Fatal(err)
		}
		creds = append(creds, fmt.Sprintf("{name: %s, credentials: [%q]}", u, cred))
	}
	audit := kproxytest.NewAuditFile(t)
	yaml := fmt.Sprintf(`
upstream:
  bootstrap_servers: ["%s"]
listeners:
  bind_host: 127.0.0.1
  bootstrap_port: 0
  broker_port_base: 0
  sasl:
    mode: terminate
    mechanisms: [SCRAM-SHA-512, PLAIN]
    users: [%s]
log: {level: warn}
audit: {output: %q}
%s`, strings.Join(c.ListenAddrs(), `", "`), strings.Join(creds, ", "), audit, policyYAML)
	p := kproxytest.Start(t, yaml)
	e := &env{t: t, cluster: c, proxy: p, reg: p.Registry, audit: audit}
	return e
}

// client returns a franz-go client of user seeded only with kproxy.
func (e *env) client(user string, opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	base := []kgo.Opt{
		kgo.SeedBrokers(e.proxy.BootstrapAddr()),
		kgo.ClientID("e2e-" + user),
		kgo.SASL(scram.Auth{User: user, Pass: user + "-secret"}.AsSha512Mechanism()),
	}
	return testkit.Client(e.t, append(base, opts...)...)
}

// direct returns a client of kfake itself, bypassing kproxy: the ground
// truth of what reached the cluster, and a way to seed it fast.
func (e *env) direct(opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	return testkit.Client(e.t, append([]kgo.Opt{kgo.SeedBrokers(e.cluster.ListenAddrs()...)}, opts...)...)
}

// records is how many records topic holds, asked of kfake directly.
func (e *env) records(ctx context.Context, topic string) int64 {
	e.t.Helper()
	offs, err := kadm.NewClient(e.direct()).ListEndOffsets(ctx, topic)
	if err != nil {
		e.t.Fatal(err)
	}
	var n int64
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			e.t.Fatalf("end offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		n += o.Offset
	})
	return n
}

// throttleHook counts the throttles a franz-go client reports
// (kgo.HookBrokerThrottle): the client's own view of being throttled.
type throttleHook struct {
	count atomic.Int64
	total atomic.Int64 // nanoseconds
	after atomic.Int64 // throttles applied after the response (KIP-219)
}

func (h *throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, after bool) {
	h.count.Add(1)
	h.total.Add(int64(d))
	if after {
		h.after.Add(1)
	}
}

func (h *throttleHook) String() string {
	return fmt.Sprintf("%d throttles (%d after the response), %v in all", h.count.Load(), h.after.Load(), time.Duration(h.total.Load()))
}

// withinRate fails unless got (bytes per second) is within ±10% of want.
func withinRate(t *testing.T, what string, got, want float64) {
	t.Helper()
	if got < 0.9*want || got > 1.1*want {
		t.Errorf("%s: %.2f MB/s, want %.2f MB/s ±10%%", what, got/1e6, want/1e6)
	} else {
		t.Logf("%s: %.2f MB/s (quota %.2f MB/s)", what, got/1e6, want/1e6)
	}
}

// rawAs returns a raw protocol connection to kproxy with clientID,
// authenticated as user with SASL PLAIN.
func (e *env) rawAs(user, clientID string) *testkit.RawConn {
	e.t.Helper()
	c := testkit.DialRaw(e.t, e.proxy.BootstrapAddr(), clientID)
	c.LoginPLAIN(e.t, user, user+"-secret")
	return c
}
