package e2epolicy

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// TestUserPrincipalFromSASL: users authenticated by kproxy's SASL are the
// principals rules name: alice may write, bob may not, and the audit log
// names bob.
func TestUserPrincipalFromSASL(t *testing.T) {
	c := testkit.Cluster(t, 1, kfake.SeedTopics(1, "t"))
	var users []string
	for _, u := range []string{"alice", "bob"} {
		cred, err := auth.HashPassword(auth.ScramSHA512, u+"-secret", 4096)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, fmt.Sprintf("{name: %s, credentials: [%q]}", u, cred))
	}
	audit := kproxytest.NewAuditFile(t)
	px := kproxytest.Start(t, fmt.Sprintf(`
upstream: {bootstrap_servers: [%q], dial_timeout: 5s}
listeners:
  bind_host: 127.0.0.1
  sasl: {mode: terminate, mechanisms: [SCRAM-SHA-512], users: [%s]}
log: {level: warn}
audit: {output: %q}
policy:
  rules:
    - {name: see, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: alice-writes, principals: ["User:alice"], allow: [write], topics: ["t"]}
`, c.ListenAddrs()[0], strings.Join(users, ", "), audit))

	ctx := testkit.Context(t, 30*time.Second)
	for _, tt := range []struct {
		user string
		want error
	}{{"alice", nil}, {"bob", kerr.TopicAuthorizationFailed}} {
		mech := scram.Auth{User: tt.user, Pass: tt.user + "-secret"}.AsSha512Mechanism()
		cl, err := kgo.NewClient(kgo.SeedBrokers(px.BootstrapAddr()), kgo.SASL(mech), kgo.DefaultProduceTopic("t"),
			kgo.DisableIdempotentWrite(), kgo.RecordRetries(1))
		if err != nil {
			t.Fatal(err)
		}
		err = cl.ProduceSync(ctx, &kgo.Record{Value: []byte(tt.user)}).FirstErr()
		cl.Close()
		if (tt.want == nil && err != nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: produce error %v, want %v", tt.user, err, tt.want)
		}
	}
	px.Stop() // every audit line written
	if !strings.Contains(audit.String(t), `"principal":"User:bob"`) || strings.Contains(audit.String(t), `"principal":"User:alice"`) {
		t.Errorf("audit log should hold bob's denial only:\n%s", audit.String(t))
	}
}
