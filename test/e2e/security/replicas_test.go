package e2esecurity

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/certs"
	"github.com/kproxy/kproxy/internal/testkit/kproxytest"
)

// TestReplicasSecureUpstream: replicas in front of a cluster that requires
// TLS and SASL from kproxy, terminating clients' SASL. Replica B, which no
// client has used, answers an unauthenticated client's ApiVersions on
// every listener from its own upstream requests; and it serves a Fetch v13
// by topic id whose Metadata went through replica A, resolving the id
// with kproxy's own upstream TLS and SCRAM login. A replica without the
// resolver answers UNKNOWN_TOPIC_ID.
func TestReplicasSecureUpstream(t *testing.T) {
	p := certs.New(t)
	cluster := secureUpstream(t, p, kfake.SeedTopics(1, "sec.rep"))
	yaml := proxyYAML(t, p, cluster.ListenAddrs(), "none", "terminate") + `
policy:
  default: deny
  rules:
    - {name: alice, principals: ["User:alice"], allow: [all], topics: ["*"], groups: ["*"], cluster: true}
`
	a, b := kproxytest.Start(t, yaml), kproxytest.Start(t, yaml)
	unaided := kproxytest.StartUnresolving(t, yaml)
	ctx := testkit.Context(t, 30*time.Second)

	if _, err := unauthenticatedSession(t, p, b.BootstrapAddr(), 3); err != nil {
		t.Fatalf("replica B's bootstrap listener, unauthenticated ApiVersions: %v", err)
	}
	for node := range int32(3) {
		addr, _ := b.BrokerAddr(node)
		if _, err := unauthenticatedSession(t, p, addr, 3); err != nil {
			t.Fatalf("replica B's listener for node %d, unauthenticated ApiVersions: %v", node, err)
		}
	}

	alice := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()
	cl := newClient(t, kgo.SeedBrokers(a.BootstrapAddr()), kgo.DialTLSConfig(clientTLS(t, p, false)), kgo.SASL(alice))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "sec.rep", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce through replica A: %v", err)
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctx, "sec.rep")
	if err != nil || topics["sec.rep"].Err != nil {
		t.Fatalf("metadata through replica A: %v %+v", err, topics)
	}
	id, leader := topics["sec.rep"].ID, topics["sec.rep"].Partitions[0].Leader

	fetchByID := func(px interface{ BrokerAddr(int32) (string, bool) }) int16 {
		addr, _ := px.BrokerAddr(leader)
		c, err := dialRawTLS(t, addr, clientTLS(t, p, false))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		loginAlice(t, c)
		resp, err := c.RoundTrip(testkit.FetchByID(13, id))
		if err != nil {
			t.Fatal(err)
		}
		fr := resp.(*kmsg.FetchResponse)
		if fr.ErrorCode != 0 || len(fr.Topics) == 0 || len(fr.Topics[0].Partitions) == 0 {
			return fr.ErrorCode
		}
		if fp := fr.Topics[0].Partitions[0]; fp.ErrorCode != 0 || len(fp.RecordBatches) == 0 {
			return fp.ErrorCode
		}
		return 0
	}
	if code := fetchByID(unaided); code != 100 {
		t.Fatalf("control: a replica without the resolver answered Fetch by id with %d, want UNKNOWN_TOPIC_ID (100)", code)
	}
	if code := fetchByID(b); code != 0 {
		t.Fatalf("Fetch v13 by id through replica B: error %d, want the record", code)
	}
}
