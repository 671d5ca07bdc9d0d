package policy

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

func metadataReq(version int16, auto bool, topics ...string) *kmsg.MetadataRequest {
	r := kmsg.NewPtrMetadataRequest()
	r.SetVersion(version)
	r.AllowAutoTopicCreation = auto
	for _, name := range topics {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(name)
		r.Topics = append(r.Topics, t)
	}
	return r
}

func metadataResp(r *kmsg.MetadataRequest, topics map[string]int16) *kmsg.MetadataResponse {
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	for name, code := range topics {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic, t.ErrorCode = kmsg.StringPtr(name), code
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// TestAutoCreationObeysTopicChanges: a Metadata request that asks to
// auto-create a topic that a CreateTopics with the broker's defaults would
// be refused for is forwarded with auto-creation off; one every rule
// accepts keeps it. The refusal is audited only when the topic turned out
// not to exist.
func TestAutoCreationObeysTopicChanges(t *testing.T) {
	const base = `
policy:
  default: allow
  governance:
`
	for _, tt := range []struct {
		name, gov, topic string
		autoKept         bool
	}{
		{"name pattern refuses", `    - {name: names, topic_changes: {name_pattern: "re:^[a-z]+\\.[a-z]+$"}}`, "BadName", false},
		{"name pattern accepts", `    - {name: names, topic_changes: {name_pattern: "re:^[a-z]+\\.[a-z]+$"}}`, "good.name", true},
		{"rule scoped to other topics", `    - {name: names, topics: ["pay.*"], topic_changes: {name_pattern: "re:^x"}}`, "good.name", true},
		{"required config cannot be met", `    - {name: isr, topic_changes: {required_configs: ["min.insync.replicas >= 2"]}}`, "good.name", false},
		{"max partitions, defaults unknown", `    - {name: max, topic_changes: {max_partitions: 64}}`, "good.name", false},
		{"max partitions, defaults declared", `    - {name: max, topic_changes: {max_partitions: 64}}
  broker_defaults: {num_partitions: 8, default_replication_factor: 3}`, "good.name", true},
		{"max partitions, declared default too high", `    - {name: max, topic_changes: {max_partitions: 64}}
  broker_defaults: {num_partitions: 100}`, "good.name", false},
		{"min rf, defaults unknown", `    - {name: rf, topic_changes: {min_replication_factor: 3}}`, "good.name", false},
		{"max rf, declared", `    - {name: rf, topic_changes: {max_replication_factor: 3}}
  broker_defaults: {default_replication_factor: 3}`, "good.name", true},
		{"forbidden configs only", `    - {name: f, topic_changes: {forbidden_configs: ["unclean.*"]}}`, "good.name", true},
	} {
		enf, audit := auditedEnforcer(t, base+tt.gov+"\n")
		req := metadataReq(12, true, tt.topic)
		v := filterRequest(enf, testConn, req)
		if req.AllowAutoTopicCreation != tt.autoKept || v.Modified == tt.autoKept {
			t.Errorf("%s: forwarded allow_auto_topic_creation=%v (modified %v), want %v", tt.name, req.AllowAutoTopicCreation, v.Modified, tt.autoKept)
		}
		if tt.autoKept || v.OnResponse == nil {
			continue
		}
		applyResponse(t, v, metadataResp(req, map[string]int16{tt.topic: errUnknownTopicOrPartition}))
		enf.Close()
		if !strings.Contains(audit.String(), `"decision":"deny"`) || !strings.Contains(audit.String(), tt.topic) {
			t.Errorf("%s: no audit line for the refused creation:\n%s", tt.name, audit.String())
		}
	}
}

// TestAutoCreationRefusalNotAuditedForExistingTopic: switching
// auto-creation off changes nothing for a topic that exists.
func TestAutoCreationRefusalNotAuditedForExistingTopic(t *testing.T) {
	enf, audit := auditedEnforcer(t, `
policy:
  default: allow
  governance:
    - {name: names, topic_changes: {name_pattern: "re:^[a-z]+$"}}
`)
	req := metadataReq(12, true, "Legacy")
	v := filterRequest(enf, testConn, req)
	if req.AllowAutoTopicCreation {
		t.Fatal("auto-creation left on")
	}
	applyResponse(t, v, metadataResp(req, map[string]int16{"Legacy": 0}))
	enf.Close()
	if audit.String() != "" {
		t.Errorf("audited a refusal for an existing topic: %s", audit.String())
	}
}

// TestAutoCreationAuditMode: audit mode records the would-be refusal and
// leaves the request alone.
func TestAutoCreationAuditMode(t *testing.T) {
	enf, audit := auditedEnforcer(t, `
policy:
  mode: audit
  default: allow
  governance:
    - {name: names, topic_changes: {name_pattern: "re:^[a-z]+$"}}
`)
	req := metadataReq(12, true, "Bad")
	if v := filterRequest(enf, testConn, req); v.Modified || !req.AllowAutoTopicCreation {
		t.Errorf("audit mode changed the request: %+v", v)
	}
	enf.Close()
	if !strings.Contains(audit.String(), `"decision":"audit_deny"`) {
		t.Errorf("audit mode did not record the would-be refusal: %s", audit.String())
	}
}

// TestLegacyMetadataCannotAutoCreate: Metadata v0-3 always auto-creates
// (no field to switch it off). With a listed topic the principal may not
// create, or governance refuses, kproxy asks for all topics (which never
// auto-creates) and answers the listed ones from that.
func TestLegacyMetadataCannotAutoCreate(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  rules:
    - {name: see, principals: ["*"], allow: [describe], topics: ["*"]}
    - {name: make, principals: ["*"], allow: [create], topics: ["ok.*", "Bad*"]}
    - {name: hidden, principals: ["*"], deny: [describe], topics: ["secret"]}
  governance:
    - {name: names, topic_changes: {name_pattern: "re:^[a-z.]+$"}}
`, nil)
	for _, version := range []int16{0, 1, 3} {
		req := metadataReq(version, false, "exists", "nocreate", "BadName", "secret", "ok.new")
		v := filterRequest(enf, testConn, req)
		if !v.Modified || v.OnResponse == nil {
			t.Fatalf("v%d: verdict %+v", version, v)
		}
		if (version == 0 && (req.Topics == nil || len(req.Topics) != 0)) || (version > 0 && req.Topics != nil) {
			t.Fatalf("v%d: forwarded topics %+v, want the all-topics form", version, req.Topics)
		}
		resp := metadataResp(req, map[string]int16{"exists": 0, "other": 0, "secret": 0})
		applyResponse(t, v, resp)
		var got []string
		for _, tp := range resp.Topics {
			got = append(got, *tp.Topic+":"+itoa(int(tp.ErrorCode)))
		}
		want := "exists:0 nocreate:29 BadName:3 secret:29 ok.new:3"
		if strings.Join(got, " ") != want {
			t.Errorf("v%d: answered %q, want %q", version, strings.Join(got, " "), want)
		}
	}
	// Nothing refused: the ordinary path, unchanged.
	req := metadataReq(1, false, "ok.new")
	if v := filterRequest(enf, testConn, req); v.Modified {
		t.Errorf("a v1 request with nothing refused was modified: %+v", v)
	}
}

// TestCreateTopicsLeftToBrokerDefaults: a count left to the broker fails
// a bound kproxy cannot check, unless policy.broker_defaults declares it;
// an explicit assignment counts by its smallest and largest replica sets.
func TestCreateTopicsLeftToBrokerDefaults(t *testing.T) {
	const gov = `
policy:
  default: allow
  governance:
    - {name: shape, topic_changes: {max_partitions: 64, min_replication_factor: 2, max_replication_factor: 3}}
`
	mk := func(parts int32, rf int16, assignment ...[]int32) *kmsg.CreateTopicsRequest {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.SetVersion(5)
		tp := kmsg.NewCreateTopicsRequestTopic()
		tp.Topic, tp.NumPartitions, tp.ReplicationFactor = "t", parts, rf
		for i, a := range assignment {
			tp.ReplicaAssignment = append(tp.ReplicaAssignment, kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: int32(i), Replicas: a})
		}
		req.Topics = append(req.Topics, tp)
		return req
	}
	for _, tt := range []struct {
		name     string
		defaults string
		req      *kmsg.CreateTopicsRequest
		refused  string // the check named in the error, "" when allowed
	}{
		{"explicit", "", mk(8, 3), ""},
		{"partitions left to broker", "", mk(-1, 3), "max_partitions"},
		{"rf left to broker", "", mk(8, -1), "replication factor left to the broker"},
		{"declared defaults", "  broker_defaults: {num_partitions: 8, default_replication_factor: 3}\n", mk(-1, -1), ""},
		{"declared default too many", "  broker_defaults: {num_partitions: 100, default_replication_factor: 3}\n", mk(-1, -1), "100 partitions"},
		{"assignment ok", "", mk(-1, -1, []int32{1, 2}, []int32{2, 3}), ""},
		{"assignment with one thin partition", "", mk(-1, -1, []int32{1, 2, 3}, []int32{2}), "below min_replication_factor"},
		{"assignment with one wide partition", "", mk(-1, -1, []int32{1, 2}, []int32{1, 2, 3, 4}), "exceeds max_replication_factor"},
	} {
		enf := newTestEnforcer(t, gov+tt.defaults, nil)
		v := filterRequest(enf, testConn, tt.req)
		if tt.refused == "" {
			if v.Respond != nil {
				t.Errorf("%s: refused: %+v", tt.name, v.Respond)
			}
			continue
		}
		resp, ok := v.Respond.(*kmsg.CreateTopicsResponse)
		if !ok || resp.Topics[0].ErrorCode != errPolicyViolation || !strings.Contains(deref(resp.Topics[0].ErrorMessage), tt.refused) {
			t.Errorf("%s: verdict %+v, want POLICY_VIOLATION naming %q", tt.name, v, tt.refused)
		}
	}
}

// TestCreatePartitionsMaxPartitions: the new total is bounded.
func TestCreatePartitionsMaxPartitions(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - {name: max-64, topics: ["capped.*"], topic_changes: {max_partitions: 64}}
`, nil)
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.SetVersion(3)
	for _, tp := range []struct {
		name  string
		count int32
	}{{"capped.a", 65}, {"capped.b", 64}, {"free", 1000}} {
		req.Topics = append(req.Topics, kmsg.CreatePartitionsRequestTopic{Topic: tp.name, Count: tp.count})
	}
	v := filterRequest(enf, testConn, req)
	if len(req.Topics) != 2 || req.Topics[0].Topic != "capped.b" || req.Topics[1].Topic != "free" {
		t.Fatalf("forwarded %+v", req.Topics)
	}
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	resp.Topics = []kmsg.CreatePartitionsResponseTopic{{Topic: "capped.b"}, {Topic: "free"}}
	applyResponse(t, v, resp)
	if resp.Topics[0].Topic != "capped.a" || resp.Topics[0].ErrorCode != errPolicyViolation || !strings.Contains(deref(resp.Topics[0].ErrorMessage), `"max-64"`) {
		t.Errorf("answered %+v", resp.Topics)
	}
}

// TestIncrementalAlterConfigsCannotDodgeRequirements: a required key can
// only be SET to a value that satisfies it; a forbidden key can be deleted.
func TestIncrementalAlterConfigsCannotDodgeRequirements(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - name: keep
      topic_changes:
        required_configs: ["retention.ms <= 604800000", "cleanup.policy = delete"]
        forbidden_configs: ["unclean.leader.election.enable"]
`, nil)
	type change struct {
		op    kmsg.IncrementalAlterConfigOp
		key   string
		value *string
	}
	for _, tt := range []struct {
		name    string
		changes []change
		ok      bool
	}{
		{"set within bound", []change{{kmsg.IncrementalAlterConfigOpSet, "retention.ms", strPtr("86400000")}}, true},
		{"set unlimited", []change{{kmsg.IncrementalAlterConfigOpSet, "retention.ms", strPtr("-1")}}, false},
		{"set null", []change{{kmsg.IncrementalAlterConfigOpSet, "retention.ms", nil}}, false},
		{"delete required", []change{{kmsg.IncrementalAlterConfigOpDelete, "retention.ms", nil}}, false},
		{"append to required", []change{{kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", strPtr("compact")}}, false},
		{"subtract from required", []change{{kmsg.IncrementalAlterConfigOpSubtract, "cleanup.policy", strPtr("delete")}}, false},
		{"unknown op on required", []change{{kmsg.IncrementalAlterConfigOp(9), "cleanup.policy", strPtr("delete")}}, false},
		{"good then bad duplicate", []change{
			{kmsg.IncrementalAlterConfigOpSet, "retention.ms", strPtr("1000")},
			{kmsg.IncrementalAlterConfigOpSet, "retention.ms", strPtr("-1")}}, false},
		{"bad then good duplicate", []change{
			{kmsg.IncrementalAlterConfigOpSet, "retention.ms", strPtr("-1")},
			{kmsg.IncrementalAlterConfigOpSet, "retention.ms", strPtr("1000")}}, false},
		{"append forbidden", []change{{kmsg.IncrementalAlterConfigOpAppend, "unclean.leader.election.enable", strPtr("true")}}, false},
		{"delete forbidden", []change{{kmsg.IncrementalAlterConfigOpDelete, "unclean.leader.election.enable", nil}}, true},
		{"append other", []change{{kmsg.IncrementalAlterConfigOpAppend, "leader.replication.throttled.replicas", strPtr("0:1")}}, true},
	} {
		var changes []kmsg.IncrementalAlterConfigsRequestResourceConfig
		for _, ch := range tt.changes {
			changes = append(changes, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: ch.key, Op: ch.op, Value: ch.value})
		}
		wantAllowed(t, tt.name, filterRequest(enf, testConn, topicConfigChanges(changes...)), tt.ok)
	}
}

// TestAlterConfigsEveryEntryChecked: AlterConfigs (a whole config) with a
// required key given twice fails if either value breaks the requirement,
// and a validate_only request is held to the same rules.
func TestAlterConfigsEveryEntryChecked(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - {name: keep, topic_changes: {required_configs: ["retention.ms <= 604800000"]}}
`, nil)
	for _, tt := range []struct {
		name     string
		values   []string
		validate bool
		ok       bool
	}{
		{"one good", []string{"1000"}, false, true},
		{"good and unlimited", []string{"1000", "-1"}, false, false},
		{"unlimited and good", []string{"-1", "1000"}, false, false},
		{"unlimited, validate only", []string{"-1"}, true, false},
		{"hex", []string{"0x10"}, false, false},
	} {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.SetVersion(1)
		req.ValidateOnly = tt.validate
		res := kmsg.NewAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
		for _, val := range tt.values {
			res.Configs = append(res.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: "retention.ms", Value: strPtr(val)})
		}
		req.Resources = append(req.Resources, res)
		wantAllowed(t, tt.name, filterRequest(enf, &filter.Conn{ClientID: "admin"}, req), tt.ok)
	}
}

// TestCreatePartitionsMaxPartitionsOnMisnamedTopic: an existing topic whose
// name breaks name_pattern is still bounded by max_partitions of the same
// rule (the name check, which applies to creation only, must not hide it).
func TestCreatePartitionsMaxPartitionsOnMisnamedTopic(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: allow
  governance:
    - {name: shape, topic_changes: {name_pattern: "re:^[a-z]+$", max_partitions: 8}}
`, nil)
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.SetVersion(3)
	req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "Legacy_Topic", Count: 100}}
	v := filterRequest(enf, testConn, req)
	resp, ok := v.Respond.(*kmsg.CreatePartitionsResponse)
	if !ok || resp.Topics[0].ErrorCode != errPolicyViolation || !strings.Contains(deref(resp.Topics[0].ErrorMessage), "max_partitions 8") {
		t.Errorf("CreatePartitions of Legacy_Topic to 100: verdict %+v, want POLICY_VIOLATION naming max_partitions", v)
	}
}

// TestAutoCreationDenialAuditedOnlyForAbsentTopics: clients ask to
// auto-create every topic they produce to. Kafka checks Create only for a
// topic that does not exist, so a principal that may write an existing
// topic but not create topics gets no Create denial for it: only the
// absent topic's refusal is audited, counted and answered 29.
func TestAutoCreationDenialAuditedOnlyForAbsentTopics(t *testing.T) {
	enf, audit := auditedEnforcer(t, `
policy:
  default: deny
  rules:
    - {name: writers, principals: ["*"], allow: [write, describe], topics: ["*"]}
`)
	req := metadataReq(12, true, "exists", "absent")
	v := filterRequest(enf, testConn, req)
	if req.AllowAutoTopicCreation {
		t.Fatal("auto-creation left on for a principal that may not create topics")
	}
	resp := metadataResp(req, map[string]int16{"exists": 0, "absent": errUnknownTopicOrPartition})
	applyResponse(t, v, resp)
	enf.Close()
	for _, tp := range resp.Topics {
		if want := map[string]int16{"exists": 0, "absent": errTopicAuthorizationFailed}[*tp.Topic]; tp.ErrorCode != want {
			t.Errorf("topic %s answered %d, want %d", *tp.Topic, tp.ErrorCode, want)
		}
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"decision":"deny"`) || !strings.Contains(lines[0], `"resource":"absent"`) {
		t.Errorf("audit lines %q: want one deny, for absent", lines)
	}
}
