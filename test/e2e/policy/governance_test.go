package e2epolicy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

func kadmClient(cl *kgo.Client) *kadm.Client { return kadm.NewClient(cl) }

const governancePolicy = `
policy:
  rules:
    - {name: everything, principals: ["*"], allow: [all], topics: ["*"], groups: ["*"], transactional_ids: ["ok-*"], cluster: true}
    - {name: see-txn, principals: ["*"], allow: [describe], transactional_ids: ["*"]}
  governance:
    - name: max-64
      topic_changes: {max_partitions: 64}
    - name: durable
      produce: {required_acks: all}
`

// TestCreateTopicsOverMaxPartitions: 500 partitions against max_partitions
// 64 fails with POLICY_VIOLATION naming the rule, and nothing is created
// upstream; a conforming topic in the same request is created.
func TestCreateTopicsOverMaxPartitions(t *testing.T) {
	e := newEnv(t, 3, nil, governancePolicy)
	ctx := testkit.Context(t, 30*time.Second)
	adm := kadmClient(e.client("admin"))
	resps, err := adm.CreateTopics(ctx, 500, 1, nil, "huge")
	if err != nil {
		t.Fatal(err)
	}
	r := resps["huge"]
	if !errors.Is(r.Err, kerr.PolicyViolation) || !strings.Contains(r.ErrMessage, `"max-64"`) || !strings.Contains(r.ErrMessage, "500") {
		t.Errorf("huge: err %v message %q, want POLICY_VIOLATION naming max-64", r.Err, r.ErrMessage)
	}
	// One request, split: huge2 refused, fine created, answers in order.
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	for _, spec := range []struct {
		name       string
		partitions int32
	}{{"huge2", 500}, {"fine", 8}} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = spec.name, spec.partitions, 1
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, e.client("admin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 2 || resp.Topics[0].Topic != "huge2" || resp.Topics[0].ErrorCode != kerr.PolicyViolation.Code ||
		resp.Topics[1].Topic != "fine" || resp.Topics[1].ErrorCode != 0 {
		t.Errorf("split CreateTopics answered %+v", resp.Topics)
	}
	// The upstream, asked directly.
	topics, err := e.direct().ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("huge") || topics.Has("huge2") {
		t.Error("a topic over max_partitions was created upstream")
	}
	if !topics.Has("fine") {
		t.Error("the conforming topic was not created")
	}
}

// TestRequiredAcksAll: acks=1 is refused with INVALID_REQUIRED_ACKS under
// required_acks: all; acks=all passes.
func TestRequiredAcksAll(t *testing.T) {
	e := newEnv(t, 1, []string{"t"}, governancePolicy)
	ctx := testkit.Context(t, 30*time.Second)
	leader := e.client("p", kgo.DefaultProduceTopic("t"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(1))
	err := leader.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRequiredAcks) {
		t.Errorf("acks=1: %v, want INVALID_REQUIRED_ACKS", err)
	}
	all := e.client("p", kgo.DefaultProduceTopic("t"), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := all.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Errorf("acks=all: %v", err)
	}
	if got := e.endOffset(ctx, "t", 0) + e.endOffset(ctx, "t", 1) + e.endOffset(ctx, "t", 2); got != 1 {
		t.Errorf("%d records reached the cluster, want 1", got)
	}
}

// TestDeniedTransactionalID: InitProducerId for a transactional id the
// principal may not write fails with TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
// a transactional producer with it cannot produce; an allowed id works.
func TestDeniedTransactionalID(t *testing.T) {
	e := newEnv(t, 1, []string{"t"}, governancePolicy)
	ctx := testkit.Context(t, 30*time.Second)
	cl := e.client("txn")
	for _, tt := range []struct {
		id   string
		code int16
	}{{"bad-txn", kerr.TransactionalIDAuthorizationFailed.Code}, {"ok-txn", 0}} {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = kmsg.StringPtr(tt.id)
		req.TransactionTimeoutMillis = 10000
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != tt.code {
			t.Errorf("InitProducerId %s: code %d, want %d", tt.id, resp.ErrorCode, tt.code)
		}
	}

	// kgo initializes the producer id when a transaction begins (or, at
	// the latest, on the first produce) and reports the failure as a fatal
	// producer id error naming the Kafka error.
	bad := e.client("txn", kgo.TransactionalID("bad-txn"), kgo.DefaultProduceTopic("t"))
	err := bad.BeginTransaction()
	if err == nil {
		err = bad.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr()
	}
	if err == nil || !strings.Contains(err.Error(), kerr.TransactionalIDAuthorizationFailed.Message) {
		t.Errorf("transactional produce with bad-txn: %v", err)
	}
}
