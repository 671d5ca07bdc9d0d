package policy

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const hidingPolicy = `
policy:
  default: deny
  rules:
    - {name: all, principals: ["*"], allow: [describe, read], topics: ["*"], groups: ["*"]}
    - {name: hide, principals: ["*"], deny: [describe], topics: ["*.hidden"]}
`

// TestGroupDescribesHideGroupsNamingHiddenTopics: a described group that
// names a hidden topic anywhere (a member's subscription, assignment or
// target assignment; a streams topology) is answered 29 with nothing but
// its id; a group of visible topics passes unchanged. Upstream answers as
// Kafka gives them (names and ids); kfake has no streams groups.
func TestGroupDescribesHideGroupsNamingHiddenTopics(t *testing.T) {
	enf := newTestEnforcer(t, hidingPolicy, nil)
	hiddenID := [16]byte{9}
	enf.ids.learn(hiddenID, "b.hidden")

	assignment := func(topic string, id [16]byte) kmsg.Assignment {
		tp := kmsg.NewAssignmentTopicPartition()
		tp.Topic, tp.TopicID, tp.Partitions = topic, id, []int32{0}
		return kmsg.Assignment{TopicPartitions: []kmsg.AssignmentTopicPartition{tp}}
	}
	consumerMember := func(subscribed []string, assigned, target kmsg.Assignment) kmsg.ConsumerGroupDescribeResponseGroupMember {
		m := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		m.MemberID, m.SubscribedTopics, m.Assignment, m.TargetAssignment = "m", subscribed, assigned, target
		return m
	}
	for name, member := range map[string]kmsg.ConsumerGroupDescribeResponseGroupMember{
		"subscription":        consumerMember([]string{"a", "b.hidden"}, kmsg.Assignment{}, kmsg.Assignment{}),
		"assignment":          consumerMember([]string{"a"}, assignment("b.hidden", hiddenID), kmsg.Assignment{}),
		"target assignment":   consumerMember([]string{"a"}, kmsg.Assignment{}, assignment("b.hidden", hiddenID)),
		"assignment, id only": consumerMember([]string{"a"}, assignment("", hiddenID), kmsg.Assignment{}),
		"unknown id":          consumerMember([]string{"a"}, assignment("", [16]byte{7}), kmsg.Assignment{}),
	} {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{"g", "ok"}
		v := filterRequest(enf, testConn, req)
		if v.OnResponse == nil {
			t.Fatalf("%s: no response hook", name)
		}
		resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		g := kmsg.NewConsumerGroupDescribeResponseGroup()
		g.Group, g.Members = "g", []kmsg.ConsumerGroupDescribeResponseGroupMember{member}
		ok := kmsg.NewConsumerGroupDescribeResponseGroup()
		ok.Group, ok.Members = "ok", []kmsg.ConsumerGroupDescribeResponseGroupMember{consumerMember([]string{"a"}, assignment("a", [16]byte{1}), kmsg.Assignment{})}
		resp.Groups = append(resp.Groups, g, ok)
		applyResponse(t, v, resp)
		if got := resp.Groups[0]; got.ErrorCode != errTopicAuthorizationFailed || len(got.Members) != 0 || strings.Contains(fmt.Sprint(got), "hidden") {
			t.Errorf("%s: group answered %+v, want 29 and nothing else", name, got)
		}
		if got := resp.Groups[1]; got.ErrorCode != 0 || len(got.Members) != 1 {
			t.Errorf("%s: visible group answered %+v", name, got)
		}
	}

	share := kmsg.NewPtrShareGroupDescribeRequest()
	share.GroupIDs = []string{"g"}
	v := filterRequest(enf, testConn, share)
	sresp := share.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	sg := kmsg.NewShareGroupDescribeResponseGroup()
	sm := kmsg.NewShareGroupDescribeResponseGroupMember()
	sm.SubscribedTopicNames = []string{"b.hidden"}
	sg.GroupID, sg.Members = "g", []kmsg.ShareGroupDescribeResponseGroupMember{sm}
	sresp.Groups = append(sresp.Groups, sg)
	applyResponse(t, v, sresp)
	if got := sresp.Groups[0]; got.ErrorCode != errTopicAuthorizationFailed || len(got.Members) != 0 {
		t.Errorf("share group answered %+v", got)
	}

	streams := kmsg.NewPtrStreamsGroupDescribeRequest()
	streams.Groups = []string{"g"}
	v = filterRequest(enf, testConn, streams)
	tresp := streams.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	tg := kmsg.NewStreamsGroupDescribeResponseGroup()
	tg.Group = "g"
	sub := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
	sub.SourceTopics = []string{"a"}
	sub.StateChangelogTopics = []kmsg.TopicInfo{{Topic: "b.hidden"}}
	tg.Topology = &kmsg.StreamsGroupDescribeResponseGroupTopology{Subtopologies: []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{sub}}
	tresp.Groups = append(tresp.Groups, tg)
	applyResponse(t, v, tresp)
	if got := tresp.Groups[0]; got.ErrorCode != errTopicAuthorizationFailed || got.Topology != nil {
		t.Errorf("streams group answered %+v", got)
	}
}

// TestHeartbeatAssignmentOfHiddenTopic: a heartbeat answer assigning a
// topic the principal may not describe (the policy changed under a running
// member) is answered 29 without the assignment; one of visible topics
// passes.
func TestHeartbeatAssignmentOfHiddenTopic(t *testing.T) {
	enf := newTestEnforcer(t, hidingPolicy, nil)
	hiddenID, visibleID := [16]byte{9}, [16]byte{1}
	enf.ids.learn(hiddenID, "b.hidden")
	enf.ids.learn(visibleID, "a")
	for _, ids := range [][][16]byte{{visibleID}, {visibleID, hiddenID}} {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = "g", "m", 3
		v := filterRequest(enf, testConn, req)
		if v.Respond != nil || v.OnResponse == nil {
			t.Fatalf("heartbeat verdict %+v", v)
		}
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.MemberID, resp.MemberEpoch = kmsg.StringPtr("m"), 4
		resp.Assignment = &kmsg.ConsumerGroupHeartbeatResponseAssignment{}
		for _, id := range ids {
			resp.Assignment.Topics = append(resp.Assignment.Topics, kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{TopicID: id, Partitions: []int32{0}})
		}
		applyResponse(t, v, resp)
		hidden := len(ids) == 2
		if hidden && (resp.ErrorCode != errTopicAuthorizationFailed || resp.Assignment != nil || strings.Contains(deref(resp.ErrorMessage), "hidden")) {
			t.Errorf("assignment of a hidden topic answered code %d msg %q assignment %+v", resp.ErrorCode, deref(resp.ErrorMessage), resp.Assignment)
		}
		if !hidden && (resp.ErrorCode != 0 || resp.Assignment == nil) {
			t.Errorf("visible assignment answered code %d", resp.ErrorCode)
		}

		share := kmsg.NewPtrShareGroupHeartbeatRequest()
		share.GroupID, share.MemberID = "g", "m"
		v = filterRequest(enf, testConn, share)
		sresp := share.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		sresp.Assignment = &kmsg.ShareGroupHeartbeatResponseAssignment{}
		for _, id := range ids {
			sresp.Assignment.TopicPartitions = append(sresp.Assignment.TopicPartitions, kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{TopicID: id, Partitions: []int32{0}})
		}
		applyResponse(t, v, sresp)
		if hidden != (sresp.ErrorCode == errTopicAuthorizationFailed && sresp.Assignment == nil) {
			t.Errorf("share heartbeat with hidden=%v answered code %d", hidden, sresp.ErrorCode)
		}
	}
}

// TestDecideEvery: a regex subscription is allowed only to a principal
// that may describe every topic.
func TestDecideEvery(t *testing.T) {
	for _, tt := range []struct {
		name, rules string
		want        bool
	}{
		{"allow *", `{name: a, principals: ["*"], allow: [read], topics: ["*"]}`, true},
		{"allow * deny some", `{name: a, principals: ["*"], allow: [read], topics: ["*"]}
    - {name: d, principals: ["*"], deny: [describe], topics: ["x.*"]}`, false},
		{"deny for another principal", `{name: a, principals: ["*"], allow: [read], topics: ["*"]}
    - {name: d, principals: ["User:bob"], deny: [describe], topics: ["x.*"]}`, true},
		{"allow a prefix", `{name: a, principals: ["*"], allow: [describe], topics: ["pub.*"]}`, false},
	} {
		e := compilePolicy(t, "policy:\n  default: deny\n  rules:\n    - "+tt.rules+"\n")
		s := e.subjectOf(&Principal{User: "alice"})
		if got := s.DecideEvery(OpDescribe, ResTopic).Allowed; got != tt.want {
			t.Errorf("%s: DecideEvery %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestPageDescribableTopicsAtHiddenRuns: kproxy's paging where the
// upstream's page (capped by the broker, 2000 partitions in Kafka) ends in
// hidden topics, which kfake's 2000-partition pages cannot show cheaply.
func TestPageDescribableTopicsAtHiddenRuns(t *testing.T) {
	enf := newTestEnforcer(t, hidingPolicy, nil)
	page := func(cursor *kmsg.DescribeTopicPartitionsRequestCursor, limit int32, next *kmsg.DescribeTopicPartitionsResponseNextCursor, topics ...string) string {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		req.ResponsePartitionLimit, req.Cursor = limit, cursor
		v := filterRequest(enf, testConn, req)
		if !v.Modified || req.ResponsePartitionLimit <= limit {
			t.Fatalf("upstream limit %d not raised", req.ResponsePartitionLimit)
		}
		resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
		for _, spec := range topics { // "name:first-last" or "name:" (no partitions)
			name, parts, _ := strings.Cut(spec, ":")
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic = kmsg.StringPtr(name)
			var first, last int32 = 0, -1
			if parts != "" {
				fmt.Sscanf(parts, "%d-%d", &first, &last)
			}
			for p := first; p <= last; p++ {
				rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
				rp.Partition = p
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		resp.NextCursor = next
		applyResponse(t, v, resp)
		var out []string
		for _, rt := range resp.Topics {
			out = append(out, fmt.Sprintf("%s:%d", *rt.Topic, len(rt.Partitions)))
		}
		if resp.NextCursor != nil {
			out = append(out, fmt.Sprintf("-> %s/%d", resp.NextCursor.Topic, resp.NextCursor.Partition))
		}
		return strings.Join(out, " ")
	}
	at := func(topic string, p int32) *kmsg.DescribeTopicPartitionsResponseNextCursor {
		return &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: topic, Partition: p}
	}
	// The upstream page ended inside a hidden topic: the cursor resumes
	// just past the last describable partition answered.
	if got := page(nil, 100, at("b.hidden", 7), "a:0-2", "b.hidden:0-6"); got != "a:3 -> a/3" {
		t.Errorf("page ending in a hidden topic: %q", got)
	}
	// Following it: the empty entry for "a" is dropped.
	if got := page(&kmsg.DescribeTopicPartitionsRequestCursor{Topic: "a", Partition: 3}, 100, nil, "a:", "b.hidden:0-6", "c:0-1"); got != "c:2" {
		t.Errorf("page after a past-the-end cursor: %q", got)
	}
	// An upstream page of hidden partitions only: no cursor into them.
	if got := page(nil, 100, at("b.hidden", 2000), "b.hidden:0-1999"); got != "" {
		t.Errorf("page of hidden partitions only: %q", got)
	}
	// Upstream stopped in a visible topic: its cursor stands.
	if got := page(nil, 100, at("c", 1), "a:0-2", "b.hidden:0-6", "c:0-0"); got != "a:3 c:1 -> c/1" {
		t.Errorf("page ending in a visible topic: %q", got)
	}
}

// TestDescribeTransactionsLeavesOutHiddenTopics: a described transaction
// lists only the topics the principal may describe, as Kafka's does.
func TestDescribeTransactionsLeavesOutHiddenTopics(t *testing.T) {
	enf := newTestEnforcer(t, hidingPolicy+`    - {name: txn, principals: ["*"], allow: [describe], transactional_ids: ["*"]}
`, nil)
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{"tx"}
	v := filterRequest(enf, testConn, req)
	if v.OnResponse == nil {
		t.Fatalf("verdict %+v", v)
	}
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	st := kmsg.NewDescribeTransactionsResponseTransactionState()
	st.TransactionalID = "tx"
	for _, name := range []string{"a", "b.hidden", "c"} {
		tp := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
		tp.Topic, tp.Partitions = name, []int32{0}
		st.Topics = append(st.Topics, tp)
	}
	resp.TransactionStates = append(resp.TransactionStates, st)
	applyResponse(t, v, resp)
	var got []string
	for _, tp := range resp.TransactionStates[0].Topics {
		got = append(got, tp.Topic)
	}
	if strings.Join(got, ",") != "a,c" {
		t.Errorf("transaction topics %v, want a,c", got)
	}
}

// TestHiddenTopicIDAnswersAsUnknown: in every API that names topics by id,
// a request naming a hidden topic's id (one kproxy has learned) is
// answered byte for byte as one naming an id no topic has, but for the id
// itself: same code (UNKNOWN_TOPIC_ID), same message, no name.
func TestHiddenTopicIDAnswersAsUnknown(t *testing.T) {
	enf := newTestEnforcer(t, `
policy:
  default: deny
  rules:
    - {name: all, principals: ["*"], allow: [read, write, delete], topics: ["*"], groups: ["*"], transactional_ids: ["*"]}
    - {name: hide, principals: ["*"], deny: [all], topics: ["*.hidden"]}
`, nil)
	hidden, unknown := [16]byte{0xaa, 9}, [16]byte{0xbb, 7}
	enf.ids.learn(hidden, "b.hidden")
	requests := map[string]func(id [16]byte) kmsg.Request{
		"Produce v13": func(id [16]byte) kmsg.Request {
			r := kmsg.NewPtrProduceRequest()
			r.SetVersion(13)
			r.Acks, r.TimeoutMillis = -1, 1000
			r.Topics = []kmsg.ProduceRequestTopic{{TopicID: id, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0}}}}
			return r
		},
		"Fetch v13": func(id [16]byte) kmsg.Request {
			r := kmsg.NewPtrFetchRequest()
			r.SetVersion(13)
			r.ReplicaID = -1
			r.Topics = []kmsg.FetchRequestTopic{{TopicID: id, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0}}}}
			return r
		},
		"OffsetCommit v10": func(id [16]byte) kmsg.Request {
			r := kmsg.NewPtrOffsetCommitRequest()
			r.SetVersion(10)
			r.Group = "g"
			r.Topics = []kmsg.OffsetCommitRequestTopic{{TopicID: id, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}}}}
			return r
		},
		"DeleteTopics v6": func(id [16]byte) kmsg.Request {
			r := kmsg.NewPtrDeleteTopicsRequest()
			r.SetVersion(6)
			r.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: id}}
			return r
		},
		"ShareFetch v1": func(id [16]byte) kmsg.Request {
			r := kmsg.NewPtrShareFetchRequest()
			r.SetVersion(1)
			r.GroupID = kmsg.StringPtr("g")
			r.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: id, Partitions: []kmsg.ShareFetchRequestTopicPartition{{Partition: 0}}}}
			return r
		},
		"ShareAcknowledge v1": func(id [16]byte) kmsg.Request {
			r := kmsg.NewPtrShareAcknowledgeRequest()
			r.SetVersion(1)
			r.GroupID = kmsg.StringPtr("g")
			r.Topics = []kmsg.ShareAcknowledgeRequestTopic{{TopicID: id, Partitions: []kmsg.ShareAcknowledgeRequestTopicPartition{{Partition: 0}}}}
			return r
		},
	}
	answer := func(name string, req kmsg.Request) []byte {
		v := filterRequest(enf, testConn, req)
		if v.Respond == nil {
			t.Fatalf("%s: not answered by the policy: %+v", name, v)
		}
		return v.Respond.AppendTo(nil)
	}
	for name, build := range requests {
		h := answer(name, build(hidden))
		u := answer(name, build(unknown))
		h = bytes.ReplaceAll(h, hidden[:], unknown[:])
		h = bytes.ReplaceAll(h, []byte(fmt.Sprintf("%x", hidden)), []byte(fmt.Sprintf("%x", unknown)))
		if !bytes.Equal(h, u) {
			t.Errorf("%s: the hidden id's answer differs from an unknown id's:\n%q\n%q", name, h, u)
		}
		if bytes.Contains(h, []byte("hidden")) {
			t.Errorf("%s: the answer names the topic: %q", name, h)
		}
	}
}

// TestDescribeTopicPartitionsAuditModePassesThrough: in audit mode an
// all-topics DescribeTopicPartitions is forwarded and answered unchanged.
func TestDescribeTopicPartitionsAuditModePassesThrough(t *testing.T) {
	enf := newTestEnforcer(t, strings.Replace(hidingPolicy, "policy:\n", "policy:\n  mode: audit\n", 1), nil)
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = 1
	v := filterRequest(enf, testConn, req)
	if v.Modified || req.ResponsePartitionLimit != 1 || v.OnResponse == nil {
		t.Fatalf("audit mode changed the request: %+v limit %d", v, req.ResponsePartitionLimit)
	}
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	rt.Topic = kmsg.StringPtr("b.hidden")
	resp.Topics = append(resp.Topics, rt)
	resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: "c.hidden"}
	applyResponse(t, v, resp)
	if len(resp.Topics) != 1 || resp.NextCursor == nil || resp.NextCursor.Topic != "c.hidden" {
		t.Errorf("audit mode changed the answer: %+v", resp)
	}
}

// TestDescribeGroupsConsumerProtocolTopics: a classic consumer group whose
// members' protocol bytes name a hidden topic is answered 29 with no
// members; one naming visible topics passes.
func TestDescribeGroupsConsumerProtocolTopics(t *testing.T) {
	enf := newTestEnforcer(t, hidingPolicy, nil)
	member := func(subscribed []string, assigned string) kmsg.DescribeGroupsResponseGroupMember {
		md := kmsg.ConsumerMemberMetadata{Version: 3, Topics: subscribed, Generation: -1}
		a := kmsg.ConsumerMemberAssignment{Version: 3}
		if assigned != "" {
			a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: assigned, Partitions: []int32{0}}}
		}
		m := kmsg.NewDescribeGroupsResponseGroupMember()
		m.MemberID, m.ProtocolMetadata, m.MemberAssignment = "m", md.AppendTo(nil), a.AppendTo(nil)
		return m
	}
	for name, tc := range map[string]struct {
		m      kmsg.DescribeGroupsResponseGroupMember
		hidden bool
	}{
		"visible":      {member([]string{"a"}, "a"), false},
		"subscription": {member([]string{"a", "b.hidden"}, "a"), true},
		"assignment":   {member([]string{"a"}, "b.hidden"), true},
	} {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.SetVersion(5)
		req.Groups = []string{"g"}
		v := filterRequest(enf, testConn, req)
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group, g.ProtocolType, g.Members = "g", "consumer", []kmsg.DescribeGroupsResponseGroupMember{tc.m}
		resp.Groups = append(resp.Groups, g)
		applyResponse(t, v, resp)
		got := resp.Groups[0]
		if tc.hidden != (got.ErrorCode == errTopicAuthorizationFailed && len(got.Members) == 0) || (!tc.hidden && got.ErrorCode != 0) {
			t.Errorf("%s: group answered code %d with %d members", name, got.ErrorCode, len(got.Members))
		}
	}
}

// TestDescribeShareGroupOffsetsAllTopics: a share group asked for with all
// its topics lists only the describable ones.
func TestDescribeShareGroupOffsetsAllTopics(t *testing.T) {
	enf := newTestEnforcer(t, hidingPolicy, nil)
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "g"}}
	v := filterRequest(enf, testConn, req)
	if v.OnResponse == nil {
		t.Fatalf("verdict %+v", v)
	}
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
	g.GroupID = "g"
	for _, name := range []string{"a", "b.hidden"} {
		tp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
		tp.Topic = name
		g.Topics = append(g.Topics, tp)
	}
	resp.Groups = append(resp.Groups, g)
	applyResponse(t, v, resp)
	if got := resp.Groups[0].Topics; len(got) != 1 || got[0].Topic != "a" {
		t.Errorf("all-topics share group offsets: %+v", got)
	}
}
