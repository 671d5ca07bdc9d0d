package tenant

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFindCoordinatorKeysPrefixed(t *testing.T) {
	m := New(teamANames)
	for _, tc := range []struct {
		keyType int8
	}{{coordinatorGroup}, {coordinatorTransaction}} {
		old := kmsg.NewPtrFindCoordinatorRequest()
		old.Version, old.CoordinatorType, old.CoordinatorKey = 3, tc.keyType, "app"
		up, _ := upReq(t, m, old)
		if up.CoordinatorKey != "team-a.app" {
			t.Errorf("v3 type %d key upstream %q", tc.keyType, up.CoordinatorKey)
		}

		batched := kmsg.NewPtrFindCoordinatorRequest()
		batched.Version, batched.CoordinatorType, batched.CoordinatorKeys = 4, tc.keyType, []string{"app", "other"}
		upB, _ := upReq(t, m, batched)
		if !slices.Equal(upB.CoordinatorKeys, []string{"team-a.app", "team-a.other"}) {
			t.Errorf("v4 type %d keys upstream %q", tc.keyType, upB.CoordinatorKeys)
		}
		resp := kmsg.NewPtrFindCoordinatorResponse()
		resp.Version = 4
		for _, k := range []string{"team-a.app", "team-a.other", "team-b.app"} {
			co := kmsg.NewFindCoordinatorResponseCoordinator()
			co.Key, co.ErrorMessage = k, kmsg.StringPtr("coordinator of "+k+" loading")
			resp.Coordinators = append(resp.Coordinators, co)
		}
		got := downResp(t, m, upB, resp)
		if len(got.Coordinators) != 2 || got.Coordinators[0].Key != "app" || got.Coordinators[1].Key != "other" ||
			strings.Contains(*got.Coordinators[0].ErrorMessage, "team-a.") {
			t.Errorf("v4 type %d response %+v", tc.keyType, got.Coordinators)
		}
	}
}

// The empty group id, which Kafka accepts for offsets, is each tenant's
// own: kept empty upstream it would be one group every tenant commits to,
// fetches from and deletes.
func TestEmptyGroupIDIsTheTenants(t *testing.T) {
	a, b := New(teamANames), New(Names{Group: "team-b."})
	if ua, ub := a.UpGroup(""), b.UpGroup(""); ua == ub || ua != "team-a." {
		t.Fatalf("empty group upstream %q and %q, want each tenant's own", ua, ub)
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version = 7
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "orders"}}
	if up, _ := upReq(t, a, commit); up.Group != "team-a." {
		t.Errorf("commit of group \"\" upstream as %q", up.Group)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{""}
	up, _ := upReq(t, b, del)
	resp := kmsg.NewPtrDeleteGroupsResponse()
	resp.Version, resp.Groups = 2, []kmsg.DeleteGroupsResponseGroup{{Group: up.Groups[0]}, {Group: "team-a."}}
	if got := downResp(t, b, up, resp); up.Groups[0] != "team-b." || len(got.Groups) != 1 || got.Groups[0].Group != "" {
		t.Errorf("team-b deletes group \"\" as %q, answered %+v", up.Groups[0], got.Groups)
	}
}

func TestFindCoordinatorShareKeysRefused(t *testing.T) {
	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version, r.CoordinatorType, r.CoordinatorKeys = 6, 2, []string{"team-b.app:AAAAAAAAAAAAAAAAAAAAAA:0"}
	_, a := upReq(t, New(teamANames), r)
	resp := answered[*kmsg.FindCoordinatorResponse](t, a)
	if len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("share key answer %+v", resp.Coordinators)
	}
}

func consumerMetadata(version int16, topics []string, owned ...string) []byte {
	md := kmsg.NewConsumerMemberMetadata()
	md.Version, md.Topics, md.UserData = version, topics, []byte("assignor-data")
	for _, o := range owned {
		md.OwnedPartitions = append(md.OwnedPartitions, kmsg.ConsumerMemberMetadataOwnedPartition{Topic: o, Partitions: []int32{0}})
	}
	return md.AppendTo(nil)
}

func readMetadata(t *testing.T, b []byte) kmsg.ConsumerMemberMetadata {
	t.Helper()
	var md kmsg.ConsumerMemberMetadata
	if err := md.ReadFrom(b); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	return md
}

func consumerAssignment(topics ...string) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Version = 1
	for _, tp := range topics {
		a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: tp, Partitions: []int32{0, 1}})
	}
	return a.AppendTo(nil)
}

func assignedTopics(t *testing.T, b []byte) []string {
	t.Helper()
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(b); err != nil {
		t.Fatalf("assignment: %v", err)
	}
	var names []string
	for _, tp := range a.Topics {
		names = append(names, tp.Topic)
	}
	return names
}

func TestJoinGroupConsumerMetadata(t *testing.T) {
	m := New(teamANames)
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version, r.Group, r.ProtocolType = 9, "app", "consumer"
	r.Protocols = []kmsg.JoinGroupRequestProtocol{
		{Name: "cooperative-sticky", Metadata: consumerMetadata(3, []string{"orders", "payments"}, "orders")},
		{Name: "range", Metadata: consumerMetadata(0, []string{"orders"})},
	}
	up, a := upReq(t, m, r)
	if a != nil {
		t.Fatal("answered")
	}
	if up.Group != "team-a.app" {
		t.Errorf("group %q", up.Group)
	}
	md := readMetadata(t, up.Protocols[0].Metadata)
	if !slices.Equal(md.Topics, []string{"team-a.orders", "team-a.payments"}) || md.OwnedPartitions[0].Topic != "team-a.orders" ||
		string(md.UserData) != "assignor-data" || md.Version != 3 {
		t.Errorf("metadata upstream %+v", md)
	}
	if md0 := readMetadata(t, up.Protocols[1].Metadata); !slices.Equal(md0.Topics, []string{"team-a.orders"}) || md0.Version != 0 {
		t.Errorf("v0 metadata upstream %+v", md0)
	}

	// The leader is handed every member's subscription: another tenant's
	// topic in it is left out.
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = 9
	resp.Members = []kmsg.JoinGroupResponseMember{
		{MemberID: "a", ProtocolMetadata: consumerMetadata(3, []string{"team-a.orders", "team-b.orders"}, "team-b.orders", "team-a.orders")},
		{MemberID: "b", ProtocolMetadata: []byte{0, 0, 0xff}},
	}
	got := downResp(t, m, up, resp)
	md = readMetadata(t, got.Members[0].ProtocolMetadata)
	if !slices.Equal(md.Topics, []string{"orders"}) || len(md.OwnedPartitions) != 1 || md.OwnedPartitions[0].Topic != "orders" {
		t.Errorf("metadata down %+v", md)
	}
	if md := readMetadata(t, got.Members[1].ProtocolMetadata); len(md.Topics) != 0 {
		t.Errorf("unreadable upstream metadata shown as %+v", md)
	}
}

func TestJoinGroupMalformedMetadataRefused(t *testing.T) {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version, r.Group, r.ProtocolType, r.MemberID = 5, "app", "consumer", "m-1"
	r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0x7f, 0xff, 0xff, 0xff}}}
	_, a := upReq(t, New(teamANames), r)
	resp := answered[*kmsg.JoinGroupResponse](t, a)
	if resp.ErrorCode != kerr.InconsistentGroupProtocol.Code || resp.MemberID != "m-1" {
		t.Fatalf("answer %+v", resp)
	}
}

func TestJoinGroupOtherProtocolUntouched(t *testing.T) {
	blob := []byte("connect-metadata: orders")
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version, r.Group, r.ProtocolType = 5, "app", "connect"
	r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "sessioned", Metadata: blob}}
	up, _ := upReq(t, New(teamANames), r)
	if string(up.Protocols[0].Metadata) != string(blob) || up.Group != "team-a.app" {
		t.Fatalf("connect group upstream %+v", up)
	}
}

func TestSyncGroupConsumerAssignment(t *testing.T) {
	m := New(teamANames)
	for _, version := range []int16{3, 5} {
		r := kmsg.NewPtrSyncGroupRequest()
		r.Version, r.Group = version, "app"
		if version >= 5 {
			r.ProtocolType, r.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
		}
		r.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "a", MemberAssignment: consumerAssignment("orders", "payments")}}
		up, _ := upReq(t, m, r)
		if got := assignedTopics(t, up.GroupAssignment[0].MemberAssignment); !slices.Equal(got, []string{"team-a.orders", "team-a.payments"}) || up.Group != "team-a.app" {
			t.Errorf("v%d assignment upstream %q", version, got)
		}
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.Version, resp.ProtocolType = version, r.ProtocolType
		resp.MemberAssignment = consumerAssignment("team-a.orders", "team-b.orders")
		got := downResp(t, m, up, resp)
		if names := assignedTopics(t, got.MemberAssignment); !slices.Equal(names, []string{"orders"}) {
			t.Errorf("v%d assignment down %q", version, names)
		}
	}

	bad := kmsg.NewPtrSyncGroupRequest()
	bad.Version, bad.Group, bad.ProtocolType = 5, "app", kmsg.StringPtr("consumer")
	bad.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "a", MemberAssignment: []byte{0, 1, 0x7f}}}
	_, a := upReq(t, m, bad)
	if resp := answered[*kmsg.SyncGroupResponse](t, a); resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("malformed assignment answered %+v", resp)
	}
}

func TestDescribeListDeleteGroupsHideOthers(t *testing.T) {
	m := New(teamANames)
	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Version, d.Groups = 5, []string{"app"}
	up, _ := upReq(t, m, d)
	if !slices.Equal(up.Groups, []string{"team-a.app"}) {
		t.Fatalf("describe upstream %q", up.Groups)
	}
	dr := kmsg.NewPtrDescribeGroupsResponse()
	dr.Version = 5
	g := kmsg.NewDescribeGroupsResponseGroup()
	g.Group, g.ProtocolType = "team-a.app", "consumer"
	g.Members = []kmsg.DescribeGroupsResponseGroupMember{{
		MemberID:         "a",
		ProtocolMetadata: consumerMetadata(1, []string{"team-a.orders", "team-b.orders"}),
		MemberAssignment: consumerAssignment("team-b.orders", "team-a.orders"),
	}}
	other := kmsg.NewDescribeGroupsResponseGroup()
	other.Group = "team-b.app"
	dr.Groups = []kmsg.DescribeGroupsResponseGroup{g, other}
	got := downResp(t, m, up, dr)
	if len(got.Groups) != 1 || got.Groups[0].Group != "app" {
		t.Fatalf("describe down %+v", got.Groups)
	}
	mb := got.Groups[0].Members[0]
	if md := readMetadata(t, mb.ProtocolMetadata); !slices.Equal(md.Topics, []string{"orders"}) {
		t.Errorf("member subscription %q", md.Topics)
	}
	if names := assignedTopics(t, mb.MemberAssignment); !slices.Equal(names, []string{"orders"}) {
		t.Errorf("member assignment %q", names)
	}

	lr := kmsg.NewPtrListGroupsResponse()
	lr.Version = 5
	for _, id := range []string{"team-a.app", "team-b.app", "team-a.", "app", "team-a.x"} {
		lr.Groups = append(lr.Groups, kmsg.ListGroupsResponseGroup{Group: id, ProtocolType: "consumer"})
	}
	listed := downResp(t, m, kmsg.NewPtrListGroupsRequest(), lr)
	var ids []string
	for _, g := range listed.Groups {
		ids = append(ids, g.Group)
	}
	if !slices.Equal(ids, []string{"app", "", "x"}) { // the bare prefix is the tenant's empty group id
		t.Errorf("listed %q", ids)
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"app", "team-b.app"}
	upDel, _ := upReq(t, m, del)
	if !slices.Equal(upDel.Groups, []string{"team-a.app", "team-a.team-b.app"}) {
		t.Errorf("delete upstream %q: a foreign id must stay inside the tenant", upDel.Groups)
	}
}
