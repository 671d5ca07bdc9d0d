package e2epolicy

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

const producePolicy = `
policy:
  default: deny
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: writers, principals: ["client_id:e2e-*"], allow: [write], topics: ["allowed.*"]}
`

// TestProduceSplitsDeniedTopic: one Produce request naming a denied and
// an allowed topic gets TOPIC_AUTHORIZATION_FAILED for the denied topic
// only, in the client's order, and only the allowed record reaches the
// cluster. Then the same through franz-go, whose producer batches both
// records into one request to the single broker.
func TestProduceSplitsDeniedTopic(t *testing.T) {
	e := newEnv(t, 1, []string{"allowed.t", "denied.t"}, producePolicy)
	ctx := testkit.Context(t, 30*time.Second)

	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "e2e-raw")
	resp := raw.MustRoundTrip(t, produceRequest(-1, "denied.t", "allowed.t"))
	if got := produceCodes(resp); got != "denied.t=29 allowed.t=0" {
		t.Fatalf("produce answered %q, want denied.t=29 allowed.t=0 in the client's order", got)
	}
	msg := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorMessage
	if msg == nil || !strings.Contains(*msg, `"denied.t"`) {
		t.Errorf("denial message %v does not name the topic", msg)
	}
	if got := e.endOffset(ctx, "allowed.t", 0); got != 1 {
		t.Errorf("allowed.t/0 end offset %d, want 1", got)
	}
	if got := e.endOffset(ctx, "denied.t", 0); got != 0 {
		t.Errorf("denied.t/0 end offset %d: the denied record reached the cluster", got)
	}

	// Produce v13 names topics by id only: kproxy resolves them from the
	// Metadata answers it relayed.
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("denied.t")}, {Topic: kmsg.StringPtr("allowed.t")}}
	ids := map[string][16]byte{}
	for _, tp := range raw.MustRoundTrip(t, md).(*kmsg.MetadataResponse).Topics {
		ids[*tp.Topic] = tp.TopicID
	}
	v13 := produceRequest(-1, "denied.t", "allowed.t")
	v13.SetVersion(13)
	for i := range v13.Topics {
		v13.Topics[i].TopicID, v13.Topics[i].Topic = ids[v13.Topics[i].Topic], ""
	}
	var codes []int16
	for _, tp := range raw.MustRoundTrip(t, v13).(*kmsg.ProduceResponse).Topics {
		if tp.TopicID != v13.Topics[len(codes)].TopicID {
			t.Fatalf("v13 answer out of order: %x", tp.TopicID)
		}
		codes = append(codes, tp.Partitions[0].ErrorCode)
	}
	if !slices.Equal(codes, []int16{29, 0}) {
		t.Errorf("v13 produce by topic id answered %v, want [29 0]", codes)
	}
	if got := e.endOffset(ctx, "allowed.t", 0); got != 2 {
		t.Errorf("allowed.t/0 end offset %d after the v13 produce, want 2", got)
	}

	cl := e.client("e2e-producer", kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(2))
	results := cl.ProduceSync(ctx,
		&kgo.Record{Topic: "allowed.t", Value: []byte("a")},
		&kgo.Record{Topic: "denied.t", Value: []byte("d")})
	for _, r := range results {
		switch r.Record.Topic {
		case "allowed.t":
			if r.Err != nil {
				t.Errorf("allowed record: %v", r.Err)
			}
		case "denied.t":
			if !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
				t.Errorf("denied record: %v, want TOPIC_AUTHORIZATION_FAILED", r.Err)
			}
		}
	}
	if got := e.endOffset(ctx, "allowed.t", 0); got != 3 {
		t.Errorf("allowed.t/0 end offset %d after kgo produce, want 3", got)
	}
	if got := e.endOffset(ctx, "denied.t", 0); got != 0 {
		t.Errorf("denied.t/0 end offset %d", got)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_policy_decisions_total", "decision", "deny"); n < 2 {
		t.Errorf("denied decisions metric %v, want >= 2", n)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_policy_rule_decisions_total", "decision", "deny", "operation", "Write", "rule", "default"); n < 2 {
		t.Errorf("denied Write decisions by the default rule %v, want >= 2", n)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_policy_rule_decisions_total", "decision", "allow", "rule", "describe-all"); n < 1 {
		t.Errorf("decisions allowed by rule describe-all %v, want > 0", n)
	}
}

const groupPolicy = `
policy:
  rules:
    - {name: topics, principals: ["*"], allow: [read, write], topics: ["*"]}
    - {name: groups, principals: ["*"], allow: [read], groups: ["allowed-*"]}
`

// TestConsumerInDeniedGroup: a group consumer in a group the principal
// may not read gets GROUP_AUTHORIZATION_FAILED; one in an allowed group
// consumes.
func TestConsumerInDeniedGroup(t *testing.T) {
	e := newEnv(t, 3, []string{"t"}, groupPolicy)
	ctx := testkit.Context(t, 30*time.Second)
	prod := e.client("producer", kgo.DefaultProduceTopic("t"))
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	denied := e.client("consumer", kgo.ConsumerGroup("denied-group"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var sawErr error
	for sawErr == nil && ctx.Err() == nil {
		fs := denied.PollFetches(ctx)
		for _, fe := range fs.Errors() {
			sawErr = fe.Err
		}
		if len(fs.Records()) > 0 {
			t.Fatal("consumed in a denied group")
		}
	}
	if !errors.Is(sawErr, kerr.GroupAuthorizationFailed) {
		t.Fatalf("denied group: %v, want GROUP_AUTHORIZATION_FAILED", sawErr)
	}

	// The raw protocol: JoinGroup for the denied group.
	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "raw")
	join := kmsg.NewPtrJoinGroupRequest()
	join.SetVersion(5)
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "denied-group", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	if code := raw.MustRoundTrip(t, join).(*kmsg.JoinGroupResponse).ErrorCode; code != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("JoinGroup denied-group: code %d", code)
	}
	// The response is observed just after it is written: allow a moment.
	denials := func() float64 {
		return testkit.MetricValue(t, e.reg, "kproxy_response_errors_total", "api", "JoinGroup", "error", "GROUP_AUTHORIZATION_FAILED")
	}
	for deadline := time.Now().Add(5 * time.Second); denials() < 1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := denials(); n < 1 {
		t.Errorf("kproxy_response_errors_total{api=JoinGroup,error=GROUP_AUTHORIZATION_FAILED} = %v after a denied JoinGroup, want > 0", n)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_responses_total", "api", "JoinGroup", "source", "local"); n < 1 {
		t.Errorf("kproxy_responses_total{api=JoinGroup,source=local} = %v, want the denial counted as kproxy's answer", n)
	}

	allowed := e.client("consumer", kgo.ConsumerGroup("allowed-group"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for n := 0; n == 0; {
		fs := allowed.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("allowed group consumed nothing: %v", fs.Errors())
		}
		for _, fe := range fs.Errors() {
			t.Fatalf("allowed group: %v", fe.Err)
		}
		n = len(fs.Records())
	}
	if err := allowed.CommitUncommittedOffsets(ctx); err != nil {
		t.Errorf("commit in allowed group: %v", err)
	}
}

// TestMetadataShowsOnlyPermittedTopics: a Metadata request for all topics
// lists only the describable ones; one naming a hidden topic gets
// TOPIC_AUTHORIZATION_FAILED for it and never auto-creates it.
func TestMetadataShowsOnlyPermittedTopics(t *testing.T) {
	e := newEnv(t, 3, []string{"pub.a", "pub.b", "secret.x"}, `
policy:
  rules:
    - {name: public, principals: ["*"], allow: [describe, create], topics: ["pub.*"]}
`, kfake.AllowAutoTopicCreation())
	ctx := testkit.Context(t, 30*time.Second)
	adm := kadmClient(e.client("lister"))

	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := topics.Names(); !slices.Equal(got, []string{"pub.a", "pub.b"}) {
		t.Errorf("through kproxy: %v, want [pub.a pub.b]", got)
	}
	all, err := e.direct().ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !all.Has("secret.x") {
		t.Fatal("kfake lacks secret.x: the test proves nothing")
	}

	// Explicitly asking, with auto-creation on, for a hidden existing
	// topic, a hidden new one and an allowed new one.
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	for _, n := range []string{"secret.x", "secret.new", "pub.new"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, e.client("lister"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tp := range resp.Topics {
		got = append(got, *tp.Topic+"="+kerrName(tp.ErrorCode))
	}
	if want := "secret.x=TOPIC_AUTHORIZATION_FAILED secret.new=TOPIC_AUTHORIZATION_FAILED pub.new=OK"; strings.Join(got, " ") != want {
		t.Errorf("metadata answered %v, want %s", got, want)
	}
	after, err := e.direct().ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Has("secret.new") {
		t.Error("a topic the principal may not describe was auto-created")
	}
	if !after.Has("pub.new") {
		t.Error("pub.new was not auto-created although allowed")
	}
}

func kerrName(code int16) string {
	if code == 0 {
		return "OK"
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return err.(*kerr.Error).Message
	}
	return "?"
}
