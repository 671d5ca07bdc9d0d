package tenant

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestShareGroupsPrefixed(t *testing.T) {
	m := New(teamANames)
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.SubscribedTopicNames = "app", []string{"orders"}
	if up, _ := upReq(t, m, hb); up.GroupID != "team-a.app" || up.SubscribedTopicNames[0] != "team-a.orders" {
		t.Errorf("heartbeat upstream %+v", up)
	}
	sf := kmsg.NewPtrShareFetchRequest()
	sf.Version, sf.GroupID = 1, kmsg.StringPtr("app")
	if up, _ := upReq(t, m, sf); *up.GroupID != "team-a.app" {
		t.Errorf("share fetch upstream %q", *up.GroupID)
	}
	ack := kmsg.NewPtrShareAcknowledgeRequest()
	ack.Version, ack.GroupID = 1, kmsg.StringPtr("app")
	if up, _ := upReq(t, m, ack); *up.GroupID != "team-a.app" {
		t.Errorf("share acknowledge upstream %q", *up.GroupID)
	}

	d := kmsg.NewPtrShareGroupDescribeRequest()
	d.GroupIDs = []string{"app"}
	upD, _ := upReq(t, m, d)
	dr := kmsg.NewPtrShareGroupDescribeResponse()
	g := kmsg.NewShareGroupDescribeResponseGroup()
	g.GroupID = "team-a.app"
	mb := kmsg.NewShareGroupDescribeResponseGroupMember()
	mb.SubscribedTopicNames = []string{"team-a.orders", "team-b.orders"}
	mb.Assignment.TopicPartitions = []kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{{Topic: "team-b.orders", TopicID: [16]byte{9}}}
	g.Members = []kmsg.ShareGroupDescribeResponseGroupMember{mb}
	dr.Groups = []kmsg.ShareGroupDescribeResponseGroup{g, {GroupID: "team-b.app"}}
	got := downResp(t, m, upD, dr)
	if len(got.Groups) != 1 || got.Groups[0].GroupID != "app" || !slices.Equal(got.Groups[0].Members[0].SubscribedTopicNames, []string{"orders"}) ||
		len(got.Groups[0].Members[0].Assignment.TopicPartitions) != 0 {
		t.Errorf("describe down %+v", got.Groups)
	}

	dso := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	dso.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{{GroupID: "app"}}
	upO, _ := upReq(t, m, dso)
	if upO.Groups[0].GroupID != "team-a.app" {
		t.Errorf("describe offsets upstream %q", upO.Groups[0].GroupID)
	}
	dsr := kmsg.NewPtrDescribeShareGroupOffsetsResponse()
	dsr.Groups = []kmsg.DescribeShareGroupOffsetsResponseGroup{{GroupID: "team-a.app", Topics: []kmsg.DescribeShareGroupOffsetsResponseGroupTopic{{Topic: "team-a.orders"}, {Topic: "team-b.orders"}}}}
	if got := downResp(t, m, upO, dsr); len(got.Groups[0].Topics) != 1 || got.Groups[0].Topics[0].Topic != "orders" {
		t.Errorf("describe offsets down %+v", got.Groups)
	}
}

func TestBrokerOnlyShareStateRefused(t *testing.T) {
	r := kmsg.NewPtrReadShareGroupStateRequest()
	r.GroupID = "team-b.app"
	if _, err := New(teamANames).MapRequest(t.Context(), r); err == nil {
		t.Fatal("ReadShareGroupState forwarded")
	} else if _, ok := AsAnswer(err); ok {
		t.Fatal("ReadShareGroupState answered; want the connection refused")
	}
}

func TestStreamsGroupTopologyPrefixed(t *testing.T) {
	m := New(teamANames)
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	r.Group = "app"
	r.Topology = &kmsg.StreamsGroupHeartbeatRequestTopology{Subtopologies: []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{{
		SubtopologyID: "0", SourceTopics: []string{"orders"}, SourceTopicRegex: []string{"in-.*"},
		StateChangelogTopics:    []kmsg.TopicInfo{{Topic: "app-store-changelog"}},
		RepartitionSinkTopics:   []string{"app-repartition"},
		RepartitionSourceTopics: []kmsg.TopicInfo{{Topic: "app-repartition"}},
	}}}
	up, a := upReq(t, m, r)
	if a != nil {
		t.Fatal("answered")
	}
	s := up.Topology.Subtopologies[0]
	if up.Group != "team-a.app" || s.SourceTopics[0] != "team-a.orders" || s.SourceTopicRegex[0] != `team-a\.(?:(?-s:in-.*))` ||
		s.StateChangelogTopics[0].Topic != "team-a.app-store-changelog" || s.RepartitionSinkTopics[0] != "team-a.app-repartition" ||
		s.RepartitionSourceTopics[0].Topic != "team-a.app-repartition" {
		t.Errorf("topology upstream %+v", s)
	}
	r.Topology.Subtopologies[0].SourceTopicRegex = []string{")|(.*"}
	_, a = upReq(t, m, r)
	if resp := answered[*kmsg.StreamsGroupHeartbeatResponse](t, a); resp.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Errorf("hostile source regex answered %+v", resp)
	}

	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Groups = []string{"app"}
	upD, _ := upReq(t, m, d)
	dr := kmsg.NewPtrStreamsGroupDescribeResponse()
	g := kmsg.NewStreamsGroupDescribeResponseGroup()
	g.Group = "team-a.app"
	g.Topology = &kmsg.StreamsGroupDescribeResponseGroupTopology{Subtopologies: []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{{
		SourceTopics: []string{"team-a.orders", "team-b.orders"}, StateChangelogTopics: []kmsg.TopicInfo{{Topic: "team-b.x"}},
	}}}
	dr.Groups = []kmsg.StreamsGroupDescribeResponseGroup{g}
	got := downResp(t, m, upD, dr)
	if sub := got.Groups[0].Topology.Subtopologies[0]; got.Groups[0].Group != "app" || !slices.Equal(sub.SourceTopics, []string{"orders"}) || len(sub.StateChangelogTopics) != 0 {
		t.Errorf("describe down %+v", got.Groups)
	}
}
