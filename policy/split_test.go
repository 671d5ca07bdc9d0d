package policy

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// batch encodes a v2 record batch header (and one empty record's worth of
// bytes) with the given attributes and producer id; only headers matter to
// the policy.
func batch(attrs int16, producerID int64, pad int) []byte {
	b := kmsg.RecordBatch{Magic: 2, Attributes: attrs, ProducerID: producerID, ProducerEpoch: -1, FirstSequence: -1, Records: make([]byte, pad)}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	return out
}

func produceReq(version int16, acks int16, topics ...string) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.SetVersion(version)
	r.Acks = acks
	for _, spec := range topics {
		name, parts, _ := strings.Cut(spec, ":")
		t := kmsg.NewProduceRequestTopic()
		t.Topic = name
		for i := 0; i < len(parts); i++ {
			p := kmsg.NewProduceRequestTopicPartition()
			p.Partition = int32(i)
			p.Records = batch(int16(parts[i]-'0'), -1, 10) // digit = compression codec
			t.Partitions = append(t.Partitions, p)
		}
		r.Topics = append(r.Topics, t)
	}
	return r
}

// upstreamProduce answers req as a broker would, in reverse topic order
// (brokers answer in any order; the merge restores the client's).
func upstreamProduce(req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for i := len(req.Topics) - 1; i >= 0; i-- {
		t := req.Topics[i]
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for j := len(t.Partitions) - 1; j >= 0; j-- {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.BaseOffset = t.Partitions[j].Partition, 100
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func produceCodes(resp *kmsg.ProduceResponse) string {
	var b strings.Builder
	for _, t := range resp.Topics {
		b.WriteString(t.Topic + "[")
		for _, p := range t.Partitions {
			b.WriteString(itoa(int(p.Partition)) + "=" + itoa(int(p.ErrorCode)) + " ")
		}
		b.WriteString("] ")
	}
	return strings.TrimSpace(b.String())
}

const splitPolicy = `
policy:
  rules:
    - {name: writers, principals: ["*"], allow: [write], topics: ["ok.*"]}
  governance:
    - name: no-gzip
      topics: ["ok.strict"]
      produce: {allowed_compression: [none, lz4]}
`

var testConn = &filter.Conn{ID: 7, Listener: "bootstrap", ClientID: "unit"}

func TestProduceSplitMergesInClientOrder(t *testing.T) {
	enf := newTestEnforcer(t, splitPolicy, nil)
	req := produceReq(9, -1, "ok.a:00", "denied:0", "ok.strict:010", "ok.b:0")
	v := filterRequest(enf, testConn, req)
	if !v.Modified || v.OnResponse == nil || v.Respond != nil {
		t.Fatalf("verdict %+v: want a split", v)
	}
	// Upstream sees only the allowed parts: ok.strict's gzip partition 1 is
	// removed, denied is gone.
	var sent []string
	for _, tp := range req.Topics {
		var ps []string
		for _, p := range tp.Partitions {
			ps = append(ps, itoa(int(p.Partition)))
		}
		sent = append(sent, tp.Topic+"/"+strings.Join(ps, ","))
	}
	if got := strings.Join(sent, " "); got != "ok.a/0,1 ok.strict/0,2 ok.b/0" {
		t.Fatalf("forwarded %s", got)
	}
	resp := upstreamProduce(req)
	applyResponse(t, v, resp)
	// ok.a and ok.b keep the upstream's partition order (the merge only
	// restores order where it had to insert); ok.strict is rebuilt in the
	// client's order around the synthesized partition.
	want := "ok.a[1=0 0=0 ] denied[0=29 ] ok.strict[0=0 1=44 2=0 ] ok.b[0=0 ]"
	if got := produceCodes(resp); got != want {
		t.Fatalf("merged response\n got %s\nwant %s", got, want)
	}
	msg := resp.Topics[1].Partitions[0].ErrorMessage
	if msg == nil || !strings.Contains(*msg, `Write on Topic "denied"`) {
		t.Errorf("denied partition message = %v", msg)
	}
	if msg := resp.Topics[2].Partitions[1].ErrorMessage; msg == nil || !strings.Contains(*msg, `"no-gzip"`) || !strings.Contains(*msg, "gzip") {
		t.Errorf("governance message = %v, want it to name the rule and the codec", msg)
	}
}

func TestProduceWhollyDeniedIsAnsweredLocally(t *testing.T) {
	enf := newTestEnforcer(t, splitPolicy, nil)
	req := produceReq(7, 1, "x:00", "y:0")
	v := filterRequest(enf, testConn, req)
	resp, ok := v.Respond.(*kmsg.ProduceResponse)
	if !ok || v.Modified {
		t.Fatalf("verdict %+v: want a local answer", v)
	}
	if resp.GetVersion() != 7 {
		t.Errorf("answer version %d, want the request's 7", resp.GetVersion())
	}
	if got := produceCodes(resp); got != "x[0=29 1=29 ] y[0=29 ]" {
		t.Errorf("answer %s", got)
	}
}

func TestProduceAllowedIsForwardedUntouched(t *testing.T) {
	enf := newTestEnforcer(t, splitPolicy, nil)
	v := filterRequest(enf, testConn, produceReq(9, -1, "ok.a:01", "ok.strict:03"))
	if v.Modified || v.Respond != nil || v.OnResponse != nil || v.Close != nil {
		t.Fatalf("verdict %+v: want untouched", v)
	}
}

func TestProduceTopicIDs(t *testing.T) {
	enf := newTestEnforcer(t, splitPolicy, nil)
	known, unknown := [16]byte{1}, [16]byte{2}
	enf.ids.learn(known, "ok.a")
	req := produceReq(13, -1, "a:0", "b:0")
	req.Topics[0].Topic, req.Topics[0].TopicID = "", known
	req.Topics[1].Topic, req.Topics[1].TopicID = "", unknown
	v := filterRequest(enf, testConn, req)
	if !v.Modified || len(req.Topics) != 1 || req.Topics[0].TopicID != known {
		t.Fatalf("verdict %+v, forwarded %+v", v, req.Topics)
	}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	rt := kmsg.NewProduceResponseTopic()
	rt.TopicID = known
	rt.Partitions = []kmsg.ProduceResponseTopicPartition{kmsg.NewProduceResponseTopicPartition()}
	resp.Topics = append(resp.Topics, rt)
	applyResponse(t, v, resp)
	if len(resp.Topics) != 2 || resp.Topics[0].TopicID != known || resp.Topics[1].TopicID != unknown ||
		resp.Topics[1].Partitions[0].ErrorCode != errUnknownTopicID {
		t.Fatalf("merged %+v", resp.Topics)
	}
}

func TestRequiredAcks(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - {name: durable, produce: {required_acks: all}}
`, nil)
	for _, tt := range []struct {
		acks int16
		ok   bool
	}{{-1, true}, {1, false}, {0, false}} {
		v := filterRequest(enf, testConn, produceReq(9, tt.acks, "t:0"))
		if tt.ok {
			if v.Respond != nil {
				t.Errorf("acks=%d refused", tt.acks)
			}
			continue
		}
		resp, _ := v.Respond.(*kmsg.ProduceResponse)
		if resp == nil || resp.Topics[0].Partitions[0].ErrorCode != errInvalidRequiredAcks ||
			!strings.Contains(*resp.Topics[0].Partitions[0].ErrorMessage, `"durable"`) {
			t.Errorf("acks=%d: verdict %+v", tt.acks, v)
		}
	}
}

func TestProduceBatchGovernance(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - name: small-idempotent
      produce: {max_batch_bytes: 200, require_idempotence: true}
`, nil)
	mk := func(records []byte) *kmsg.ProduceRequest {
		r := produceReq(9, -1, "t:0")
		r.Topics[0].Partitions[0].Records = records
		return r
	}
	code := func(v filter.Verdict) int16 {
		if v.Respond == nil {
			return 0
		}
		return v.Respond.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	if c := code(filterRequest(enf, testConn, mk(batch(0, 5, 10)))); c != 0 {
		t.Errorf("small idempotent batch: code %d", c)
	}
	if c := code(filterRequest(enf, testConn, mk(batch(0, -1, 10)))); c != errPolicyViolation {
		t.Errorf("batch without producer id: code %d, want POLICY_VIOLATION", c)
	}
	// Two batches: the second too large.
	two := append(batch(0, 5, 10), batch(0, 5, 300)...)
	if c := code(filterRequest(enf, testConn, mk(two))); c != errMessageTooLarge {
		t.Errorf("oversized second batch: code %d, want MESSAGE_TOO_LARGE", c)
	}
}

func TestTransactionalProduce(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: w, principals: ["*"], allow: [write], topics: ["*"], transactional_ids: ["ok-*"]}
`, nil)
	for _, tt := range []struct {
		txn  *string
		code int16
	}{{strPtr("ok-1"), 0}, {strPtr("bad"), errTransactionalIDAuthorizationFailed}, {nil, errTransactionalIDAuthorizationFailed}} {
		r := produceReq(9, -1, "t:0")
		r.TransactionID = tt.txn
		r.Topics[0].Partitions[0].Records = batch(0x10, 5, 10) // transactional
		v := filterRequest(enf, testConn, r)
		var got int16
		if v.Respond != nil {
			got = v.Respond.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
		}
		if got != tt.code {
			t.Errorf("txn %v: code %d, want %d", tt.txn, got, tt.code)
		}
	}
}

func strPtr(s string) *string { return &s }

func TestMetadataHidesAndSplits(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: see, principals: ["*"], allow: [describe], topics: ["pub.*"]}
    - {name: make, principals: ["*"], allow: [create], topics: ["pub.new"]}
`, nil)
	upstream := func(req *kmsg.MetadataRequest, names ...string) *kmsg.MetadataResponse {
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		for _, n := range names {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = strPtr(n)
			if strings.HasSuffix(n, "missing") {
				mt.ErrorCode = errUnknownTopicOrPartition
			}
			resp.Topics = append(resp.Topics, mt)
		}
		return resp
	}
	topicsOf := func(resp *kmsg.MetadataResponse) string {
		var s []string
		for _, t := range resp.Topics {
			s = append(s, *t.Topic+"="+itoa(int(t.ErrorCode)))
		}
		return strings.Join(s, " ")
	}

	// All topics: only the describable ones come back.
	all := kmsg.NewPtrMetadataRequest()
	all.SetVersion(12)
	v := filterRequest(enf, testConn, all)
	if v.Modified || v.OnResponse == nil {
		t.Fatalf("all-topics verdict %+v", v)
	}
	resp := upstream(all, "pub.a", "secret", "pub.b")
	v.OnResponse(resp)
	if got := topicsOf(resp); got != "pub.a=0 pub.b=0" {
		t.Errorf("all topics answered %s", got)
	}

	// Listed topics: the hidden one is stripped (never auto-created) and
	// answered 29 in place; auto-creation is off for the non-creatable one.
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	req.AllowAutoTopicCreation = true
	for _, n := range []string{"pub.new", "secret", "pub.missing"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = strPtr(n)
		req.Topics = append(req.Topics, mt)
	}
	v = filterRequest(enf, testConn, req)
	if !v.Modified || req.AllowAutoTopicCreation || len(req.Topics) != 2 {
		t.Fatalf("listed verdict %+v; forwarded %d topics, auto-create %v", v, len(req.Topics), req.AllowAutoTopicCreation)
	}
	resp = upstream(req, "pub.missing", "pub.new")
	v.OnResponse(resp)
	if got := topicsOf(resp); got != "pub.new=0 secret=29 pub.missing=29" {
		t.Errorf("listed topics answered %s", got)
	}

	// v0 with every listed topic denied asks upstream for all topics; the
	// answer is trimmed to the denial.
	v0 := kmsg.NewPtrMetadataRequest()
	v0.SetVersion(0)
	v0.Topics = []kmsg.MetadataRequestTopic{{Topic: strPtr("secret")}}
	v = filterRequest(enf, testConn, v0)
	resp = upstream(v0, "pub.a", "secret")
	v.OnResponse(resp)
	if got := topicsOf(resp); got != "secret=29" {
		t.Errorf("v0 answered %s", got)
	}
}

func TestFindCoordinatorBatchedSplit(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: g, principals: ["*"], allow: [read], groups: ["ok-*"]}
`, nil)
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(4)
	req.CoordinatorKeys = []string{"no-1", "ok-1", "no-2", "ok-2"}
	v := filterRequest(enf, testConn, req)
	if !v.Modified || strings.Join(req.CoordinatorKeys, ",") != "ok-1,ok-2" {
		t.Fatalf("verdict %+v, forwarded %v", v, req.CoordinatorKeys)
	}
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	for _, k := range []string{"ok-2", "ok-1"} {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key = k
		resp.Coordinators = append(resp.Coordinators, co)
	}
	v.OnResponse(resp)
	var got []string
	for _, co := range resp.Coordinators {
		got = append(got, co.Key+"="+itoa(int(co.ErrorCode)))
	}
	if strings.Join(got, " ") != "no-1=30 ok-1=0 no-2=30 ok-2=0" {
		t.Errorf("merged %v", got)
	}
}

func TestOffsetFetchBatchedSplit(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: g, principals: ["*"], allow: [describe], groups: ["ok"], topics: ["pub"]}
`, nil)
	req := kmsg.NewPtrOffsetFetchRequest()
	req.SetVersion(8)
	g1 := kmsg.NewOffsetFetchRequestGroup()
	g1.Group = "no"
	g2 := kmsg.NewOffsetFetchRequestGroup()
	g2.Group = "ok"
	g2.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "secret", Partitions: []int32{0}}, {Topic: "pub", Partitions: []int32{0, 1}}}
	req.Groups = []kmsg.OffsetFetchRequestGroup{g1, g2}
	v := filterRequest(enf, testConn, req)
	if !v.Modified || len(req.Groups) != 1 || len(req.Groups[0].Topics) != 1 || req.Groups[0].Topics[0].Topic != "pub" {
		t.Fatalf("verdict %+v forwarded %+v", v, req.Groups)
	}
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	rg := kmsg.NewOffsetFetchResponseGroup()
	rg.Group = "ok"
	rt := kmsg.NewOffsetFetchResponseGroupTopic()
	rt.Topic = "pub"
	rg.Topics = append(rg.Topics, rt)
	resp.Groups = append(resp.Groups, rg)
	v.OnResponse(resp)
	if len(resp.Groups) != 2 || resp.Groups[0].Group != "no" || resp.Groups[0].ErrorCode != errGroupAuthorizationFailed {
		t.Fatalf("groups %+v", resp.Groups)
	}
	ts := resp.Groups[1].Topics
	if len(ts) != 2 || ts[0].Topic != "secret" || ts[0].Partitions[0].ErrorCode != errTopicAuthorizationFailed || ts[1].Topic != "pub" {
		t.Fatalf("topics of ok %+v", ts)
	}
}

func TestCreateTopicsGovernance(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - name: shapes
      topic_changes:
        name_pattern: "re:^[a-z]+\\.[a-z]+$"
        max_partitions: 64
        min_replication_factor: 2
        required_configs: ["min.insync.replicas >= 2"]
        forbidden_configs: ["unclean.*"]
`, nil)
	mk := func(name string, parts int32, rf int16, configs ...string) kmsg.CreateTopicsRequestTopic {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, parts, rf
		for _, c := range configs {
			k, v, _ := strings.Cut(c, "=")
			t.Configs = append(t.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: k, Value: strPtr(v)})
		}
		return t
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(5)
	req.Topics = []kmsg.CreateTopicsRequestTopic{
		mk("good.name", 12, 3, "min.insync.replicas=2"),
		mk("BadName", 1, 3, "min.insync.replicas=2"),
		mk("too.many", 500, 3, "min.insync.replicas=2"),
		mk("low.rf", 1, 1, "min.insync.replicas=2"),
		mk("default.rf", 1, -1, "min.insync.replicas=2"),
		mk("no.isr", 1, 3),
		mk("weak.isr", 1, 3, "min.insync.replicas=1"),
		mk("unclean.one", 1, 3, "min.insync.replicas=2", "unclean.leader.election.enable=true"),
	}
	v := filterRequest(enf, testConn, req)
	if len(req.Topics) != 1 || req.Topics[0].Topic != "good.name" {
		t.Fatalf("forwarded %+v (verdict %+v)", req.Topics, v)
	}
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	resp.Topics = append(resp.Topics, kmsg.CreateTopicsResponseTopic{Topic: "good.name"})
	v.OnResponse(resp)
	wantChecks := []string{"", "name_pattern", "max_partitions", "min_replication_factor", "min_replication_factor", "must be set", "does not satisfy", "forbidden"}
	for i, tt := range resp.Topics {
		if i == 0 {
			if tt.ErrorCode != 0 {
				t.Errorf("good.name: %d", tt.ErrorCode)
			}
			continue
		}
		if tt.ErrorCode != errPolicyViolation || tt.ErrorMessage == nil || !strings.Contains(*tt.ErrorMessage, wantChecks[i]) || !strings.Contains(*tt.ErrorMessage, `"shapes"`) {
			t.Errorf("%s: code %d message %v, want POLICY_VIOLATION naming %q and the rule", tt.Topic, tt.ErrorCode, deref(tt.ErrorMessage), wantChecks[i])
		}
	}
}

func TestIncrementalAlterConfigsGovernance(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - name: isr
      topic_changes: {required_configs: ["min.insync.replicas >= 2"], forbidden_configs: ["unclean.leader.election.enable"]}
`, nil)
	for _, tt := range []struct {
		name  string
		op    kmsg.IncrementalAlterConfigOp
		key   string
		value string
		ok    bool
	}{
		{"set other", kmsg.IncrementalAlterConfigOpSet, "retention.ms", "1", true},
		{"set required ok", kmsg.IncrementalAlterConfigOpSet, "min.insync.replicas", "3", true},
		{"set required too low", kmsg.IncrementalAlterConfigOpSet, "min.insync.replicas", "1", false},
		{"delete required", kmsg.IncrementalAlterConfigOpDelete, "min.insync.replicas", "", false},
		{"set forbidden", kmsg.IncrementalAlterConfigOpSet, "unclean.leader.election.enable", "true", false},
	} {
		req := topicConfigChanges(kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: tt.key, Op: tt.op, Value: strPtr(tt.value)})
		wantAllowed(t, tt.name, filterRequest(enf, testConn, req), tt.ok)
	}
}

func TestClientIDPatternClosesAndForbiddenAPIs(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - {name: ids, client_id_pattern: "app-*"}
    - {name: no-delete-records, forbidden_apis: [deleterecords]}
`, nil)
	bad := &filter.Conn{ClientID: "rogue"}
	if v := filterRequest(enf, bad, kmsg.NewPtrMetadataRequest()); v.Close == nil || !strings.Contains(v.Close.Error(), `"ids"`) {
		t.Errorf("client id rogue: verdict %+v, want close naming the rule", v)
	}
	good := &filter.Conn{ClientID: "app-1"}
	if v := filterRequest(enf, good, kmsg.NewPtrMetadataRequest()); v.Close != nil || v.Respond != nil {
		t.Errorf("client id app-1: %+v", v)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "t", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0}}}}
	v := filterRequest(enf, good, req)
	resp, ok := v.Respond.(*kmsg.DeleteRecordsResponse)
	if !ok || resp.Topics[0].Partitions[0].ErrorCode != errPolicyViolation {
		t.Errorf("forbidden DeleteRecords: %+v", v)
	}
}

func TestInitProducerID(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: w, principals: ["client_id:writer"], allow: [write], topics: ["x"], transactional_ids: ["tx-*"]}
`, nil)
	for _, tt := range []struct {
		client string
		txn    *string
		code   int16
	}{
		{"writer", nil, 0}, // idempotent: Write on some topic suffices
		{"reader", nil, errClusterAuthorizationFailed},
		{"writer", strPtr("tx-1"), 0},
		{"writer", strPtr("other"), errTransactionalIDAuthorizationFailed},
	} {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.SetVersion(4)
		req.TransactionalID = tt.txn
		v := filterRequest(enf, &filter.Conn{ClientID: tt.client}, req)
		var got int16
		if v.Respond != nil {
			got = v.Respond.(*kmsg.InitProducerIDResponse).ErrorCode
		}
		if got != tt.code {
			t.Errorf("%s txn %v: code %d, want %d", tt.client, tt.txn, got, tt.code)
		}
	}
}

// TestAuditModeNeverAltersTraffic: what enforce mode would split, refuse or
// answer itself (a denied topic, an id kproxy cannot name, transactional
// batches without an id) goes upstream untouched in audit mode.
func TestAuditModeNeverAltersTraffic(t *testing.T) {
	enf := newTestEnforcer(t, strings.Replace(splitPolicy, "policy:\n", "policy:\n  mode: audit\n", 1), nil)
	byID := produceReq(13, -1, "x:0")
	byID.Topics[0].Topic, byID.Topics[0].TopicID = "", [16]byte{9}
	txn := produceReq(9, -1, "ok.a:0")
	txn.Topics[0].Partitions[0].Records = batch(0x10, 5, 1)
	for name, req := range map[string]*kmsg.ProduceRequest{
		"denied topic":      produceReq(9, -1, "denied:0", "ok.a:0"),
		"governance":        produceReq(9, -1, "ok.strict:1"),
		"unknown topic id":  byID,
		"txn without an id": txn,
	} {
		before := len(req.Topics)
		if v := filterRequest(enf, testConn, req); v.Respond != nil || v.Modified || v.Close != nil || v.OnResponse != nil || len(req.Topics) != before {
			t.Errorf("%s: audit mode altered the request: %+v", name, v)
		}
	}
}
