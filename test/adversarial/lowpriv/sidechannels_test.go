package lowpriv

import (
	"bytes"
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/protocol"
)

// TestLowPrivSideChannels: the principal tries to learn of the topics,
// groups and transactions it may not describe through every side channel
// a broker's authorizer closes. Each subtest first checks, straight at the
// cluster, that what it looks for is there to be found.
func TestLowPrivSideChannels(t *testing.T) {
	e := startLowprivEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct, err := kgo.NewClient(kgo.SeedBrokers(e.cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	adm := kadm.NewClient(direct)
	c := e.dial()
	versions := c.Versions(t)

	t.Run("Metadata of all topics lists only its own", func(t *testing.T) {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(versions[req.Key()])
		req.Topics = nil
		frame, resp := e.roundTrip(t, c, req)
		var names []string
		for _, tp := range resp.(*kmsg.MetadataResponse).Topics {
			names = append(names, deref(tp.Topic))
		}
		if !slices.Equal(names, []string{lowprivMine}) {
			t.Errorf("all-topics Metadata lists %v, want [%s]", names, lowprivMine)
		}
		e.noLeaks(t, "all-topics Metadata", frame, true)
	})

	t.Run("Metadata auto-creation creates nothing and tells nothing", func(t *testing.T) {
		answers := map[string][]int16{}
		for _, topic := range []string{secretTopic, "lowpriv-new-topic"} {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(versions[req.Key()])
			req.AllowAutoTopicCreation = true
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, mt)
			frame, resp := e.roundTrip(t, c, req)
			for _, tp := range resp.(*kmsg.MetadataResponse).Topics {
				answers[topic] = append(answers[topic], tp.ErrorCode)
			}
			e.noLeaks(t, "Metadata of "+topic, frame, false)
		}
		if want := []int16{kerr.TopicAuthorizationFailed.Code}; !slices.Equal(answers[secretTopic], want) || !slices.Equal(answers["lowpriv-new-topic"], want) {
			t.Errorf("Metadata with auto-creation answered %v, want TOPIC_AUTHORIZATION_FAILED for both the hidden and the missing topic", answers)
		}
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if topics.Has("lowpriv-new-topic") {
			t.Error("a principal without Create had a topic auto-created")
		}
	})

	t.Run("CreateTopics validate_only is no existence oracle", func(t *testing.T) {
		answers := map[string][]int16{}
		for _, topic := range []string{secretTopic, "lowpriv-ghost-topic"} {
			req := kmsg.NewPtrCreateTopicsRequest()
			req.SetVersion(versions[req.Key()])
			req.ValidateOnly = true
			ct := kmsg.NewCreateTopicsRequestTopic()
			ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 1, 1
			req.Topics = append(req.Topics, ct)
			frame, resp := e.roundTrip(t, c, req)
			answers[topic] = errorCodes(resp)
			e.noLeaks(t, "CreateTopics of "+topic, frame, false)
		}
		// Kafka without Create: TOPIC_AUTHORIZATION_FAILED, never
		// TOPIC_ALREADY_EXISTS.
		if want := []int16{kerr.TopicAuthorizationFailed.Code}; !slices.Equal(answers[secretTopic], want) || !slices.Equal(answers["lowpriv-ghost-topic"], want) {
			t.Errorf("validate-only CreateTopics answered %v, want TOPIC_AUTHORIZATION_FAILED for both", answers)
		}
	})

	t.Run("DescribeTopicPartitions cursor walks only its own", func(t *testing.T) {
		var cursor *kmsg.DescribeTopicPartitionsRequestCursor
		seen := map[string]bool{}
		for page := 0; page < 20; page++ {
			req := kmsg.NewPtrDescribeTopicPartitionsRequest()
			req.ResponsePartitionLimit, req.Cursor = 1, cursor
			frame, resp := e.roundTrip(t, c, req)
			e.noLeaks(t, "a DescribeTopicPartitions page", frame, true)
			r := resp.(*kmsg.DescribeTopicPartitionsResponse)
			for _, tp := range r.Topics {
				seen[deref(tp.Topic)] = true
			}
			if r.NextCursor == nil {
				break
			}
			cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: r.NextCursor.Topic, Partition: r.NextCursor.Partition}
		}
		if len(seen) != 1 || !seen[lowprivMine] {
			t.Errorf("walking the cursor listed %v, want only %s", seen, lowprivMine)
		}
		// A cursor the client sets at a hidden topic answers as at a
		// missing one next to it in name order; one before every topic
		// lists its own and skips the hidden ones after it.
		var pages [][]byte
		for _, topic := range []string{secretTopic, secretTopic + "-ghost", "a-ghost"} {
			req := kmsg.NewPtrDescribeTopicPartitionsRequest()
			req.ResponsePartitionLimit = 1
			req.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: topic, Partition: 1}
			frame, _ := e.roundTrip(t, c, req)
			e.noLeaks(t, "DescribeTopicPartitions from a cursor at "+topic, frame, true)
			pages = append(pages, frame[4:]) // past the correlation id
		}
		if string(pages[0]) != string(pages[1]) {
			t.Errorf("a cursor at the hidden topic answers %q, at a missing one %q", pages[0], pages[1])
		}
		if !bytes.Contains(pages[2], []byte(lowprivMine)) {
			t.Errorf("a cursor before every topic answers %q, without %s", pages[2], lowprivMine)
		}
	})

	t.Run("Fetch by a hidden topic's id answers as an unknown id", func(t *testing.T) {
		version := versions[kmsg.NewPtrFetchRequest().Key()]
		if version < 13 {
			t.Skipf("the cluster serves Fetch up to v%d: no topic ids", version)
		}
		hidden, unknown := e.topicIDs[payrollTopic], [16]byte{0x6c, 0x6f, 0x77}
		var answers [][]byte
		for _, id := range [][16]byte{hidden, unknown} {
			req := testkit.FetchByID(version, id)
			frame, resp := e.roundTrip(t, c, req)
			if codes := errorCodes(resp); !slices.Contains(codes, kerr.UnknownTopicID.Code) {
				t.Errorf("Fetch by id %x answered %v, want UNKNOWN_TOPIC_ID", id, codes)
			}
			// The id sent is echoed, as by Kafka; nothing else may be.
			answer := bytes.ReplaceAll(frame[4:], id[:], unknown[:])
			e.noLeaks(t, "Fetch by id", answer, false)
			answers = append(answers, answer)
		}
		if string(answers[0]) != string(answers[1]) {
			t.Errorf("a hidden id's Fetch answer differs from an unknown id's:\n%q\n%q", answers[0], answers[1])
		}
	})

	t.Run("Metadata by a hidden topic's id answers as an unknown id", func(t *testing.T) {
		version := versions[kmsg.NewPtrMetadataRequest().Key()]
		if version < 10 {
			t.Skipf("the cluster serves Metadata up to v%d: no topic ids", version)
		}
		hidden, unknown := e.topicIDs[payrollTopic], [16]byte{0x6c, 0x6f, 0x77}
		var answers [][]byte
		for _, id := range [][16]byte{hidden, unknown} {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(version)
			mt := kmsg.NewMetadataRequestTopic()
			mt.TopicID = id
			req.Topics = append(req.Topics, mt)
			frame, _ := e.roundTrip(t, c, req)
			answer := bytes.ReplaceAll(frame[4:], id[:], unknown[:])
			e.noLeaks(t, "Metadata by id", answer, false)
			answers = append(answers, answer)
		}
		if string(answers[0]) != string(answers[1]) {
			t.Errorf("a hidden id's Metadata answer differs from an unknown id's:\n%q\n%q", answers[0], answers[1])
		}
	})

	brokers := e.brokers(t, c, versions)

	t.Run("a regex subscription in its own group is refused", func(t *testing.T) {
		coordinator := e.coordinator(t, c, versions, lowprivMyGroup)
		bc := e.dialTo(brokers[coordinator])
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.SetVersion(versions[req.Key()])
		req.Group, req.MemberEpoch, req.RebalanceTimeoutMillis = lowprivMyGroup, 0, 30_000
		req.SubscribedTopicRegex = kmsg.StringPtr("zz-.*|secret-.*")
		req.SubscribedTopicNames = []string{}
		req.MemberID = "lowpriv-regex-member"
		frame, resp := e.roundTrip(t, bc, req)
		e.noLeaks(t, "ConsumerGroupHeartbeat with a regex", frame, true)
		r := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
		// The cluster resolves a regex with kproxy's identity, which sees
		// every topic: kproxy refuses a regex from a principal that may
		// not describe them all, where Kafka would filter the matches.
		if r.ErrorCode != kerr.TopicAuthorizationFailed.Code || r.Assignment != nil {
			t.Errorf("a regex subscription answered error %d (%v), assignment %+v; want TOPIC_AUTHORIZATION_FAILED and none", r.ErrorCode, deref(r.ErrorMessage), r.Assignment)
		}
	})

	t.Run("ListGroups on every broker lists only its own group", func(t *testing.T) {
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []string{secretGroup, payrollGroup, lowprivMyGroup} {
			if _, ok := listed[g]; !ok {
				t.Fatalf("the cluster itself does not list group %s: %v", g, listed.Groups())
			}
		}
		var seen []string
		for _, addr := range brokers {
			bc := e.dialTo(addr)
			req := kmsg.NewPtrListGroupsRequest()
			req.SetVersion(versions[req.Key()])
			frame, resp := e.roundTrip(t, bc, req)
			e.noLeaks(t, "ListGroups", frame, true)
			for _, g := range resp.(*kmsg.ListGroupsResponse).Groups {
				seen = append(seen, g.Group)
			}
		}
		if !slices.Equal(seen, []string{lowprivMyGroup}) {
			t.Errorf("ListGroups over every broker lists %v, want [%s]", seen, lowprivMyGroup)
		}
	})

	t.Run("ListTransactions on every broker lists none", func(t *testing.T) {
		listed, err := adm.ListTransactions(ctx, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := listed[secretTxn]; !ok {
			t.Fatalf("the cluster itself does not list %s: %v", secretTxn, listed)
		}
		for _, addr := range brokers {
			bc := e.dialTo(addr)
			req := kmsg.NewPtrListTransactionsRequest()
			req.SetVersion(versions[req.Key()])
			frame, resp := e.roundTrip(t, bc, req)
			e.noLeaks(t, "ListTransactions", frame, true)
			if got := resp.(*kmsg.ListTransactionsResponse).TransactionStates; len(got) > 0 {
				t.Errorf("ListTransactions lists %+v to a principal with no transactional id", got)
			}
		}
	})

	t.Run("OffsetFetch of its own group for all topics leaves out hidden ones", func(t *testing.T) {
		committed, err := adm.FetchOffsets(ctx, lowprivMyGroup)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := committed.Lookup(payrollTopic, 0); !ok {
			t.Fatalf("the cluster holds no offset of %s in %s: %v", payrollTopic, lowprivMyGroup, committed)
		}
		coordinator := e.coordinator(t, c, versions, lowprivMyGroup)
		bc := e.dialTo(brokers[coordinator])
		req := kmsg.NewPtrOffsetFetchRequest()
		req.SetVersion(versions[req.Key()])
		req.Group = lowprivMyGroup
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = lowprivMyGroup
		req.Groups = append(req.Groups, g) // v8+: the group; older: Group
		frame, resp := e.roundTrip(t, bc, req)
		e.noLeaks(t, "OffsetFetch of all topics", frame, true)
		r := resp.(*kmsg.OffsetFetchResponse)
		var topics []string
		for _, tp := range r.Topics {
			topics = append(topics, tp.Topic)
		}
		for _, rg := range r.Groups {
			for _, tp := range rg.Topics {
				topics = append(topics, e.topicName(tp.Topic, tp.TopicID)) // v10+: by id
			}
		}
		if !slices.Equal(topics, []string{lowprivMine}) {
			t.Errorf("OffsetFetch v%d of all topics of %s answers %v, want [%s]: %+v", req.Version, lowprivMyGroup, topics, lowprivMine, r)
		}
	})

	t.Run("a streams topology in its own group names no hidden topic", func(t *testing.T) {
		coordinator := e.coordinator(t, c, versions, lowprivMyGroup)
		bc := e.dialTo(brokers[coordinator])

		// A source topic regex: the broker would resolve it over every
		// topic and name the matches in its answer.
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.SetVersion(versions[hb.Key()])
		hb.Group, hb.MemberID, hb.RebalanceTimeoutMillis = lowprivMyGroup, "lowpriv-streams-member", 30_000
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		sub.SubtopologyID, sub.SourceTopicRegex = "0", []string{"zz-.*|secret-.*"}
		topo.Subtopologies = append(topo.Subtopologies, sub)
		hb.Topology = &topo

		// A topology description naming a topic it may not describe: the
		// cluster would keep it and show it to the group's describers.
		desc := kmsg.NewPtrStreamsGroupTopologyDescriptionUpdateRequest()
		desc.SetVersion(versions[desc.Key()])
		desc.Group, desc.MemberID = lowprivMyGroup, "lowpriv-streams-member"
		node := kmsg.NewTopologyDescriptionNode()
		node.Name, node.SourceTopics = "source", []string{secretTopic}
		dsub := kmsg.NewTopologyDescriptionSubtopology()
		dsub.Nodes = append(dsub.Nodes, node)
		desc.TopologyDescription.Subtopologies = append(desc.TopologyDescription.Subtopologies, dsub)

		for _, req := range []kmsg.Request{hb, desc} {
			name := protocol.APIName(req.Key())
			before := e.seen.count(req.Key())
			frame, resp := e.roundTrip(t, bc, req)
			e.noLeaks(t, name, frame, false)
			if codes := errorCodes(resp); !slices.Equal(codes, []int16{kerr.TopicAuthorizationFailed.Code}) {
				t.Errorf("%s answered %v, want TOPIC_AUTHORIZATION_FAILED", name, codes)
			}
			if e.seen.count(req.Key()) != before {
				t.Errorf("%s reached the cluster", name)
			}
		}
	})

	// Last: it changes the principal's own group.
	t.Run("DescribeGroups of its own group hides a member's hidden topic", func(t *testing.T) {
		member := lingeringMember(t, ctx, direct, lowprivMyGroup)
		described, err := adm.DescribeGroups(ctx, lowprivMyGroup)
		if err != nil {
			t.Fatal(err)
		}
		if g := described[lowprivMyGroup]; len(g.Members) != 1 || g.Members[0].MemberID != member {
			t.Fatalf("the cluster itself does not describe the member of %s: %+v", lowprivMyGroup, g)
		}
		coordinator := e.coordinator(t, c, versions, lowprivMyGroup)
		bc := e.dialTo(brokers[coordinator])
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.SetVersion(versions[req.Key()])
		req.Groups = []string{lowprivMyGroup}
		frame, resp := e.roundTrip(t, bc, req)
		e.noLeaks(t, "DescribeGroups of its own group", frame, true)
		if bytes.Contains(frame, []byte(member)) {
			t.Errorf("DescribeGroups of its own group names the member subscribed to a hidden topic: %q", frame)
		}
		// Kafka 4.0: a consumer group whose members subscribe to a topic
		// the principal may not describe is TOPIC_AUTHORIZATION_FAILED.
		if codes := errorCodes(resp); !slices.Equal(codes, []int16{kerr.TopicAuthorizationFailed.Code}) {
			t.Errorf("DescribeGroups of its own group answered %v, want TOPIC_AUTHORIZATION_FAILED", codes)
		}
	})

	t.Run("DescribeConfigs of every resource type it may not describe", func(t *testing.T) {
		for _, tc := range []struct {
			typ  kmsg.ConfigResourceType
			name string
			want int16
		}{
			{kmsg.ConfigResourceTypeBroker, "0", kerr.ClusterAuthorizationFailed.Code},
			{kmsg.ConfigResourceTypeBrokerLogger, "0", kerr.ClusterAuthorizationFailed.Code},
			{kmsg.ConfigResourceTypeGroupConfig, secretGroup, kerr.GroupAuthorizationFailed.Code},
			{kmsg.ConfigResourceTypeGroupConfig, lowprivMyGroup, kerr.GroupAuthorizationFailed.Code}, // Read is not DescribeConfigs
			{kmsg.ConfigResourceTypeTopic, lowprivMine, kerr.TopicAuthorizationFailed.Code},          // nor on a topic
		} {
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.SetVersion(versions[req.Key()])
			res := kmsg.NewDescribeConfigsRequestResource()
			res.ResourceType, res.ResourceName = tc.typ, tc.name
			req.Resources = append(req.Resources, res)
			frame, resp := e.roundTrip(t, c, req)
			e.noLeaks(t, "DescribeConfigs", frame, tc.name != secretGroup)
			if codes := errorCodes(resp); !slices.Equal(codes, []int16{tc.want}) {
				t.Errorf("DescribeConfigs of %v %q answered %v, want [%d]", tc.typ, tc.name, codes, tc.want)
			}
		}
	})
}

// roundTrip sends req on c and fails the test unless an answer comes.
func (e *lowprivEnv) roundTrip(t *testing.T, c *testkit.RawConn, req kmsg.Request) ([]byte, kmsg.Response) {
	t.Helper()
	return c.MustExchange(t, req)
}

// noLeaks fails t if frame holds anything the principal may not learn
// (named: also the names it never sent, which no listing may echo).
func (e *lowprivEnv) noLeaks(t *testing.T, what string, frame []byte, named bool) {
	t.Helper()
	if leaks := e.leaks(frame, named); len(leaks) > 0 {
		t.Errorf("%s answer holds %v:\n%q", what, leaks, frame)
	}
}

// brokers are kproxy's broker listeners, by node id, from a Metadata
// answer relayed through it.
func (e *lowprivEnv) brokers(t *testing.T, c *testkit.RawConn, versions map[int16]int16) map[int32]string {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(versions[req.Key()])
	_, resp := e.roundTrip(t, c, req)
	addrs := map[int32]string{}
	for _, b := range resp.(*kmsg.MetadataResponse).Brokers {
		addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	if len(addrs) != 3 {
		t.Fatalf("kproxy names %d brokers, want 3: %v", len(addrs), addrs)
	}
	return addrs
}

// coordinator is the node id of group's coordinator, asked through kproxy.
func (e *lowprivEnv) coordinator(t *testing.T, c *testkit.RawConn, versions map[int16]int16, group string) int32 {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.SetVersion(versions[req.Key()])
	req.CoordinatorKey, req.CoordinatorKeys = group, []string{group}
	_, resp := e.roundTrip(t, c, req)
	r := resp.(*kmsg.FindCoordinatorResponse)
	if len(r.Coordinators) > 0 {
		if code := r.Coordinators[0].ErrorCode; code != 0 {
			t.Fatalf("FindCoordinator %s: error %d", group, code)
		}
		return r.Coordinators[0].NodeID
	}
	if r.ErrorCode != 0 {
		t.Fatalf("FindCoordinator %s: error %d", group, r.ErrorCode)
	}
	return r.NodeID
}

// topicName is name, or the name of the seeded topic whose id is id.
func (e *lowprivEnv) topicName(name string, id [16]byte) string {
	for n, tid := range e.topicIDs {
		if name == "" && tid == id {
			return n
		}
	}
	return name
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
