package e2epolicy

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// hidingPolicy lets every principal describe every topic but the
// "*.hidden" ones, whose names sort between the visible ones.
const hidingPolicy = `
policy:
  default: deny
  rules:
    - {name: describe-all, principals: ["*"], allow: [describe, read, delete, create], topics: ["*"]}
    - {name: hide, principals: ["*"], deny: [all], topics: ["*.hidden"]}
`

var hidingTopics = []string{"t1", "t2.hidden", "t3", "t4.hidden", "t5.hidden", "t6"}

// describePage asks for one page of DescribeTopicPartitions.
func describePage(t *testing.T, raw *testkit.RawConn, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = limit
	req.Cursor = cursor
	for _, name := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		req.Topics = append(req.Topics, rt)
	}
	return raw.MustRoundTrip(t, req).(*kmsg.DescribeTopicPartitionsResponse)
}

// pageString renders a page as "topic/partition ... -> cursor".
func pageString(resp *kmsg.DescribeTopicPartitionsResponse) string {
	var parts []string
	for _, tp := range resp.Topics {
		if tp.ErrorCode != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", deref(tp.Topic), tp.ErrorCode))
		}
		for _, p := range tp.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d", deref(tp.Topic), p.Partition))
		}
	}
	s := strings.Join(parts, " ")
	if resp.NextCursor != nil {
		s += fmt.Sprintf(" -> %s/%d", resp.NextCursor.Topic, resp.NextCursor.Partition)
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestDescribeTopicPartitionsCursorHidesTopics: following the cursor of
// an all-topics DescribeTopicPartitions with a partition limit of 1 walks
// every describable partition once, in order, and no page or cursor ever
// names a hidden topic (before the fix the cursor named each hidden topic
// and, followed, listed its partitions' count). A client cursor naming a
// hidden topic answers the same whether that topic exists or not.
func TestDescribeTopicPartitionsCursorHidesTopics(t *testing.T) {
	e := newEnv(t, 1, hidingTopics, hidingPolicy)
	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "e2e-dtp")

	var walked []string
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for page := 0; ; page++ {
		if page > 20 {
			t.Fatalf("cursor does not end; walked %v", walked)
		}
		resp := describePage(t, raw, 1, cursor)
		s := pageString(resp)
		if strings.Contains(s, "hidden") {
			t.Fatalf("page %d names a hidden topic: %q", page, s)
		}
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				walked = append(walked, fmt.Sprintf("%s/%d", *tp.Topic, p.Partition))
			}
		}
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	want := []string{"t1/0", "t1/1", "t1/2", "t3/0", "t3/1", "t3/2", "t6/0", "t6/1", "t6/2"}
	if !slices.Equal(walked, want) {
		t.Errorf("walked %v, want %v", walked, want)
	}

	// A larger page spans hidden topics without counting them.
	if got := pageString(describePage(t, raw, 4, nil)); got != "t1/0 t1/1 t1/2 t3/0 -> t3/1" {
		t.Errorf("limit 4 page %q", got)
	}

	// A hostile cursor naming a hidden topic: the same answer for one that
	// exists and one that does not.
	existing := pageString(describePage(t, raw, 1, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "t4.hidden", Partition: 1}))
	missing := pageString(describePage(t, raw, 1, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "t4.gone.hidden", Partition: 1}))
	if existing != "t6/0 -> t6/1" || missing != existing {
		t.Errorf("cursor at an existing hidden topic: %q; at a missing one: %q; want both t6/0 -> t6/1", existing, missing)
	}

	// Listed topics with the cursor at a denied one: as Kafka, the denied
	// topic is answered 29 and the page goes on after it; nothing before
	// the cursor is answered.
	got := pageString(describePage(t, raw, 10, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "t2.hidden"}, "t1", "t2.hidden", "t3"))
	if got != "t2.hidden=29 t3/0 t3/1 t3/2" {
		t.Errorf("listed topics from a denied cursor: %q", got)
	}
}

// topicID asks kfake itself for a topic's id.
func (e *env) topicID(t *testing.T, topic string) [16]byte {
	t.Helper()
	details, err := e.direct().ListTopics(testkit.Context(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil {
		t.Fatalf("topic %s: %+v", topic, d)
	}
	return d.ID
}

func metadataByID(t *testing.T, raw *testkit.RawConn, id [16]byte) kmsg.MetadataResponseTopic {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	req.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}}
	resp := raw.MustRoundTrip(t, req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 {
		t.Fatalf("metadata by id answered %d topics", len(resp.Topics))
	}
	return resp.Topics[0]
}

// TestTopicIDOfHiddenTopic: Metadata, Fetch and DeleteTopics naming a
// hidden topic by its id answer exactly as for an id no topic has:
// UNKNOWN_TOPIC_ID and no name (before the fix: the name and 29, against
// 100 for an unknown id). Both while kproxy does not know the id yet (the
// upstream's answer is rewritten) and once it has learned it.
func TestTopicIDOfHiddenTopic(t *testing.T) {
	e := newEnv(t, 1, hidingTopics, hidingPolicy)
	hidden := e.topicID(t, "t2.hidden")
	nobody := [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "e2e-ids")

	check := func(stage string) {
		for _, id := range [][16]byte{hidden, nobody} {
			got := metadataByID(t, raw, id)
			if got.ErrorCode != kerrUnknownTopicID || got.Topic != nil || got.TopicID != id || len(got.Partitions) != 0 {
				t.Errorf("%s: metadata by id %x: code %d name %v id %x partitions %d, want 100, no name, the id, none",
					stage, id, got.ErrorCode, deref(got.Topic), got.TopicID, len(got.Partitions))
			}
		}

		fetch := func(id [16]byte) string {
			resp := raw.MustRoundTrip(t, rawFetchByID(id)).(*kmsg.FetchResponse)
			var parts []string
			for _, tp := range resp.Topics {
				for _, p := range tp.Partitions {
					parts = append(parts, fmt.Sprintf("%s/%d=%d", tp.Topic, p.Partition, p.ErrorCode))
				}
			}
			return strings.Join(parts, " ")
		}
		if h, n := fetch(hidden), fetch(nobody); h != "/0=100" || n != h {
			t.Errorf("%s: fetch by the hidden id %q, by an unknown id %q, want both /0=100", stage, h, n)
		}

		del := func(id [16]byte) kmsg.DeleteTopicsResponseTopic {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.SetVersion(6)
			req.TimeoutMillis = 5000
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: id}}
			resp := raw.MustRoundTrip(t, req).(*kmsg.DeleteTopicsResponse)
			if len(resp.Topics) != 1 {
				t.Fatalf("delete by id answered %d topics", len(resp.Topics))
			}
			return resp.Topics[0]
		}
		h, n := del(hidden), del(nobody)
		msgOf := func(tp kmsg.DeleteTopicsResponseTopic) string {
			return strings.ReplaceAll(strings.ReplaceAll(deref(tp.ErrorMessage), fmt.Sprintf("%x", hidden), "ID"), fmt.Sprintf("%x", nobody), "ID")
		}
		if h.ErrorCode != kerrUnknownTopicID || h.Topic != nil || n.ErrorCode != h.ErrorCode || msgOf(h) != msgOf(n) {
			t.Errorf("%s: delete by the hidden id: code %d name %v msg %q; by an unknown id: code %d msg %q",
				stage, h.ErrorCode, deref(h.Topic), deref(h.ErrorMessage), n.ErrorCode, deref(n.ErrorMessage))
		}
	}
	check("id not yet known to kproxy")

	// Any all-topics Metadata teaches kproxy every id, hidden ones too.
	all := kmsg.NewPtrMetadataRequest()
	all.SetVersion(12)
	for _, tp := range raw.MustRoundTrip(t, all).(*kmsg.MetadataResponse).Topics {
		if strings.Contains(deref(tp.Topic), "hidden") {
			t.Fatalf("all-topics metadata lists %s", *tp.Topic)
		}
	}
	check("id known to kproxy")

	if _, err := e.direct().ListTopics(testkit.Context(t, 10*time.Second), "t2.hidden"); err != nil {
		t.Fatal(err)
	}
	if got := e.topicID(t, "t2.hidden"); got != hidden {
		t.Errorf("t2.hidden changed id: was it deleted?")
	}
}

const kerrUnknownTopicID = 100

// TestCreateTopicsDoesNotRevealHiddenTopic: a principal that may create
// topics but not describe "*.hidden" ones gets the same answer,
// TOPIC_AUTHORIZATION_FAILED, for an existing and a missing hidden topic,
// validate-only or not (before the fix: TOPIC_ALREADY_EXISTS for the
// existing one, success for the missing one), and nothing is created.
func TestCreateTopicsDoesNotRevealHiddenTopic(t *testing.T) {
	e := newEnv(t, 1, hidingTopics, `
policy:
  default: deny
  rules:
    - {name: make, principals: ["*"], allow: [describe, create], topics: ["*"]}
    - {name: hide, principals: ["*"], deny: [describe], topics: ["*.hidden"]}
`)
	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "e2e-create")
	create := func(validateOnly bool, names ...string) string {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.SetVersion(7)
		req.TimeoutMillis, req.ValidateOnly = 5000, validateOnly
		for _, n := range names {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = n, 1, 1
			req.Topics = append(req.Topics, rt)
		}
		var parts []string
		for _, tp := range raw.MustRoundTrip(t, req).(*kmsg.CreateTopicsResponse).Topics {
			msg := strings.ReplaceAll(deref(tp.ErrorMessage), tp.Topic, "NAME")
			parts = append(parts, fmt.Sprintf("%s=%d(%s)", tp.Topic, tp.ErrorCode, msg))
		}
		return strings.Join(parts, " ")
	}
	for _, validateOnly := range []bool{true, false} {
		got := create(validateOnly, "t2.hidden", "t9.hidden")
		want := `t2.hidden=29(kproxy policy: Describe on Topic "NAME" denied to ` // the rest names the principal and rule
		parts := strings.Split(got, " t9.hidden=")
		if len(parts) != 2 || !strings.HasPrefix(parts[0], want) || "t9.hidden="+parts[1] != strings.Replace(parts[0], "t2.hidden", "t9.hidden", 1) {
			t.Errorf("validate_only=%v: %s; want the same 29 for both", validateOnly, got)
		}
	}
	details, err := e.direct().ListTopics(testkit.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if details.Has("t9.hidden") {
		t.Error("t9.hidden was created")
	}
	if got := create(false, "t7"); got != "t7=0(<nil>)" {
		t.Errorf("creating a describable topic: %s", got)
	}
}

// groupHidingPolicy: "admin" may describe every topic, everyone else not
// the "*.hidden" ones.
const groupHidingPolicy = `
policy:
  default: deny
  rules:
    - {name: all, principals: ["*"], allow: [describe, read], topics: ["*"], groups: ["*"]}
    - {name: hide, principals: ["client_id:e2e-*"], deny: [all], topics: ["*.hidden"]}
`

// heartbeat joins (epoch 0) or heartbeats a KIP-848 member.
func heartbeat(t *testing.T, raw *testkit.RawConn, group, member string, epoch int32, names []string, regex string) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.SetVersion(1)
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = group, member, epoch, 10000
	if epoch == 0 {
		req.SubscribedTopicNames = names
		if regex != "" {
			req.SubscribedTopicRegex = &regex
		}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	return raw.MustRoundTrip(t, req).(*kmsg.ConsumerGroupHeartbeatResponse)
}

// TestGroupsDoNotRevealHiddenTopics: a regex subscription from a principal
// that may not describe every topic is refused (before the fix the broker
// assigned it the hidden topics' partitions); an admin's regex subscription
// works; describing a group whose members subscribe to or are assigned a
// hidden topic answers TOPIC_AUTHORIZATION_FAILED and no members, as Kafka
// 4.0 (before: every member's topics, names and ids); a group of visible
// topics is described in full.
func TestGroupsDoNotRevealHiddenTopics(t *testing.T) {
	e := newEnv(t, 1, hidingTopics, groupHidingPolicy)
	low := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "e2e-low")
	admin := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "admin")

	resp := heartbeat(t, low, "g-regex", "m-low", 0, nil, "t.*")
	if resp.ErrorCode != 29 || resp.Assignment != nil || strings.Contains(deref(resp.ErrorMessage), "hidden") ||
		!strings.Contains(deref(resp.ErrorMessage), "subscribe by topic names") {
		t.Errorf("low-privilege regex subscription: code %d msg %q assignment %d topics; want 29, a message naming no topic",
			resp.ErrorCode, deref(resp.ErrorMessage), len(resp.Assignment.Topics))
	}

	// The admin subscribes by regex and is assigned every t* topic.
	var assigned int
	for epoch, i := int32(0), 0; i < 20 && assigned == 0; i++ {
		r := heartbeat(t, admin, "g-regex", "m-admin", epoch, nil, "t.*")
		if r.ErrorCode != 0 {
			t.Fatalf("admin regex heartbeat: code %d %s", r.ErrorCode, deref(r.ErrorMessage))
		}
		epoch = r.MemberEpoch
		if r.Assignment != nil {
			assigned = len(r.Assignment.Topics)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if assigned != len(hidingTopics) {
		t.Fatalf("admin assigned %d topics, want %d", assigned, len(hidingTopics))
	}
	// And a member of a group of visible topics only.
	if r := heartbeat(t, admin, "g-visible", "m-vis", 0, []string{"t1", "t3"}, ""); r.ErrorCode != 0 {
		t.Fatalf("visible group heartbeat: %d", r.ErrorCode)
	}

	describe := func(raw *testkit.RawConn) map[string]kmsg.ConsumerGroupDescribeResponseGroup {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.SetVersion(1)
		req.Groups = []string{"g-regex", "g-visible"}
		out := map[string]kmsg.ConsumerGroupDescribeResponseGroup{}
		for _, g := range raw.MustRoundTrip(t, req).(*kmsg.ConsumerGroupDescribeResponse).Groups {
			out[g.Group] = g
		}
		return out
	}
	// kfake's descriptions name assigned topics by id only (Kafka's name
	// them too): kproxy, which fails closed on ids it cannot name, learns
	// them from any Metadata answer it relays.
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	admin.MustRoundTrip(t, md)

	got := describe(low)
	if g := got["g-regex"]; g.ErrorCode != 29 || len(g.Members) != 0 || strings.Contains(fmt.Sprintf("%+v", g), "hidden") {
		t.Errorf("low-privilege describe of the regex group: code %d members %d: %+v", g.ErrorCode, len(g.Members), g)
	}
	if g := got["g-visible"]; g.ErrorCode != 0 || len(g.Members) != 1 || !slices.Equal(g.Members[0].SubscribedTopics, []string{"t1", "t3"}) {
		t.Errorf("low-privilege describe of the visible group: %+v", g)
	}
	if g := describe(admin)["g-regex"]; g.ErrorCode != 0 || len(g.Members) != 1 {
		t.Errorf("admin describe of the regex group: code %d members %d", g.ErrorCode, len(g.Members))
	}
}

// TestAuthorizedOperationsArePrincipals: authorized operations in
// Metadata, DescribeTopicPartitions and DescribeCluster are the
// principal's under the policy, not those of kproxy's identity on the
// broker (before the fix: kfake's, every operation).
func TestAuthorizedOperationsArePrincipals(t *testing.T) {
	e := newEnv(t, 1, hidingTopics, hidingPolicy)
	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "e2e-ops")
	const want = 1<<3 | 1<<5 | 1<<6 | 1<<8 // read, create, delete, describe

	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	md.IncludeTopicAuthorizedOperations = true
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("t1")}}
	if got := raw.MustRoundTrip(t, md).(*kmsg.MetadataResponse).Topics[0].AuthorizedOperations; got != want {
		t.Errorf("metadata t1 authorized operations %b, want %b", got, want)
	}

	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.ResponsePartitionLimit = 10
	dtp.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "t1"}}
	if got := raw.MustRoundTrip(t, dtp).(*kmsg.DescribeTopicPartitionsResponse).Topics[0].AuthorizedOperations; got != want {
		t.Errorf("DescribeTopicPartitions t1 authorized operations %b, want %b", got, want)
	}

	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	if got := raw.MustRoundTrip(t, dc).(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations; got != 0 {
		t.Errorf("cluster authorized operations %b, want none", got)
	}
}

// TestClassicDescribeGroupsHidesTopics: a classic consumer group (a real
// franz-go consumer, straight on kfake) subscribed to a hidden topic is
// described through kproxy as TOPIC_AUTHORIZATION_FAILED with no members;
// before the fix the members' protocol bytes named the hidden topic.
func TestClassicDescribeGroupsHidesTopics(t *testing.T) {
	e := newEnv(t, 1, hidingTopics, groupHidingPolicy)
	ctx := testkit.Context(t, 30*time.Second)
	cl := testkit.Client(t, kgo.SeedBrokers(e.cluster.ListenAddrs()...), kgo.ConsumerGroup("classic"),
		kgo.ConsumeTopics("t1", "t2.hidden"), kgo.Balancers(kgo.CooperativeStickyBalancer()))
	raw := testkit.DialRaw(t, e.proxy.BootstrapAddr(), "e2e-low")
	describe := func() kmsg.DescribeGroupsResponseGroup {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.SetVersion(5)
		req.Groups = []string{"classic"}
		return raw.MustRoundTrip(t, req).(*kmsg.DescribeGroupsResponse).Groups[0]
	}
	for ctx.Err() == nil {
		cl.PollRecords(testkit.Context(t, 200*time.Millisecond), 1)
		direct := kadm.NewClient(cl)
		if gs, err := direct.DescribeGroups(ctx, "classic"); err == nil && gs["classic"].State == "Stable" {
			break
		}
	}
	g := describe()
	if g.ErrorCode != 29 || len(g.Members) != 0 {
		t.Errorf("classic group with a hidden subscription described as code %d with %d members, want 29 and none", g.ErrorCode, len(g.Members))
	}
	for _, m := range g.Members {
		if bytes.Contains(m.ProtocolMetadata, []byte("hidden")) || bytes.Contains(m.MemberAssignment, []byte("hidden")) {
			t.Errorf("member %s's protocol bytes name the hidden topic", m.MemberID)
		}
	}
}
