package encryption

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/testkit"
)

// TestForgedMarkerRefused: a producer that sends the encryption marker
// itself, to get a record of its making past kproxy as "encrypted", gets
// INVALID_RECORD for the partition and nothing is stored; its other
// records are stored encrypted.
func TestForgedMarkerRefused(t *testing.T) {
	e := newEnv(t, []string{"orders"}, encryption("alias/kek"))
	ctx := testkit.Context(t, 30*time.Second)
	forged := &kgo.Record{Topic: "orders", Value: []byte("forged"),
		Headers: []kgo.RecordHeader{{Key: envelope.HeaderName, Value: []byte{envelope.Version, 1, 0, 0, 0, 1, 'x'}}}}
	err := e.client(e.kp.Bootstrap).ProduceSync(ctx, forged).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("forged marker: %v, want INVALID_RECORD", err)
	}
	if err := e.client(e.kp.Bootstrap).ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("honest")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	direct := e.direct(kgo.ConsumeTopics("orders"))
	fs := direct.PollFetches(ctx)
	if recs := fs.Records(); len(recs) != 1 || bytes.Contains(recs[0].Value, []byte("forged")) || bytes.Contains(recs[0].Value, []byte("honest")) {
		t.Fatalf("stored %d records, want only the honest one, encrypted", len(recs))
	}
}

// TestDeniedProduceCallsNoKMS: a principal the policy denies writes
// cannot make kproxy ask the KMS for a data key (a cost and a KMS quota
// an intruder could otherwise spend): the policy answers first.
func TestDeniedProduceCallsNoKMS(t *testing.T) {
	e := newEnv(t, []string{"orders"}, encryption("alias/kek")+`policy:
  default: allow
  rules: [{name: no-writes, principals: ["client_id:intruder"], deny: [write], topics: ["*"]}]
`)
	ctx := testkit.Context(t, 30*time.Second)
	for range 5 {
		err := e.client(e.kp.Bootstrap, kgo.ClientID("intruder")).ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr()
		if !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Fatalf("denied produce: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
	}
	if n := e.kmsCalls("generate_data_key"); n != 0 {
		t.Fatalf("%v GenerateDataKey calls for denied produces, want 0", n)
	}
	if err := e.client(e.kp.Bootstrap, kgo.ClientID("writer")).ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if n := e.kmsCalls("generate_data_key"); n != 1 {
		t.Errorf("%v GenerateDataKey calls after one allowed produce, want 1 (the metric counts)", n)
	}
}

// TestCopiedCiphertextDoesNotDecrypt: tenant b (or anyone who can write to
// the brokers) copies tenant a's stored records, marker and all, into b's
// own topic. Both tenants' KEKs (here one key behind two aliases) are in
// the KMS that kproxy may use, so only the topic bound into the authenticated data stops b's
// fetch from decrypting them: b gets INVALID_RECORD and no byte of a's
// plaintext.
func TestCopiedCiphertextDoesNotDecrypt(t *testing.T) {
	cluster := `listeners: {bind_host: 127.0.0.1}
` + encryption("alias/$(virtual_cluster)/kek") + `virtual_clusters:
  - {name: teama, topic_prefix: teama., group_prefix: teama., transactional_id_prefix: teama., listeners: {bootstrap_port: 0, broker_port_base: 0}}
  - {name: teamb, topic_prefix: teamb., group_prefix: teamb., transactional_id_prefix: teamb., listeners: {bootstrap_port: 0, broker_port_base: 0}}
`
	e := newEnv(t, []string{"teama.payments", "teamb.payments"}, cluster)
	ctx := testkit.Context(t, 30*time.Second)
	a := e.client(e.kp.VirtualClusterBootstrap("teama"))
	if err := a.ProduceSync(ctx, &kgo.Record{Topic: "payments", Value: []byte("card 4111-1111"),
		Headers: []kgo.RecordHeader{{Key: "holder", Value: []byte("alice smith")}}}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stored := e.direct(kgo.ConsumeTopics("teama.payments")).PollFetches(ctx).Records()
	if len(stored) != 1 {
		t.Fatalf("%d stored records", len(stored))
	}
	copied := &kgo.Record{Topic: "teamb.payments", Value: stored[0].Value, Headers: stored[0].Headers}
	if err := e.direct().ProduceSync(ctx, copied).FirstErr(); err != nil {
		t.Fatal(err)
	}

	b := e.client(e.kp.VirtualClusterBootstrap("teamb"), kgo.ConsumeTopics("payments"))
	var fetchErr error
	for fetchErr == nil && ctx.Err() == nil {
		fs := b.PollFetches(ctx)
		for _, r := range fs.Records() {
			t.Fatalf("tenant b was handed the copied record: %q", r.Value)
		}
		fs.EachError(func(_ string, _ int32, err error) { fetchErr = err })
	}
	if !errors.Is(fetchErr, kerr.InvalidRecord) {
		t.Fatalf("tenant b fetching a copied record: %v, want INVALID_RECORD", fetchErr)
	}
	got := e.client(e.kp.VirtualClusterBootstrap("teama"), kgo.ConsumeTopics("payments")).PollFetches(ctx).Records()
	if len(got) != 1 || string(got[0].Value) != "card 4111-1111" {
		t.Errorf("tenant a reads back %v", got)
	}
}
