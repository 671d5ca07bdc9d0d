package tenant

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var teamANames = Names{Topic: "team-a.", Group: "team-a.", TransactionalID: "team-a."}

// roundTripResponse encodes resp at its version and decodes it again, so a
// test maps what a real upstream frame would decode to.
func roundTripResponse[R kmsg.Response](t *testing.T, resp R) R {
	t.Helper()
	out := kmsg.ResponseForKey(resp.Key()).(R) // fresh
	out.SetVersion(resp.GetVersion())
	if err := out.ReadFrom(resp.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNamesEdges(t *testing.T) {
	m := New(teamANames)
	if got := m.UpTopic(""); got != "" {
		t.Errorf("UpTopic(\"\") = %q: the bare prefix is a legal topic, the empty name must stay invalid", got)
	}
	if _, ok := m.DownTopic("team-a."); ok {
		t.Error("the bare prefix maps to the empty name; want hidden")
	}
	if _, ok := m.DownTopic("team-b.orders"); ok {
		t.Error("another tenant's topic visible")
	}
	if _, ok := m.DownTopic("__consumer_offsets"); ok {
		t.Error("internal topic visible")
	}
	if got, ok := m.DownTopic("team-a.orders"); !ok || got != "orders" {
		t.Errorf("DownTopic(team-a.orders) = %q %v", got, ok)
	}
	msg := "Topic team-a.orders of group team-a.app not found"
	m.DownMessage(&msg)
	if msg != "Topic orders of group app not found" {
		t.Errorf("DownMessage: %q", msg)
	}

	// No topic prefix: internal topics stay out of reach, by name too.
	bare := New(Names{Group: "g."})
	if _, ok := bare.DownTopic("__transaction_state"); ok {
		t.Error("internal topic visible to a tenant without a topic prefix")
	}
	up := bare.UpTopic("__consumer_offsets")
	if up == "__consumer_offsets" {
		t.Fatal("a tenant without a topic prefix reaches __consumer_offsets by name")
	}
	if back, ok := bare.DownTopic(up); !ok || back != "__consumer_offsets" {
		t.Errorf("the hidden internal name %q maps back to %q %v", up, back, ok)
	}
}

// Metadata for all topics shows the tenant's only: not another tenant's,
// not internal ones (also one the upstream marks internal that no list
// names), and the virtual cluster's id.
func TestMetadataHidesOthers(t *testing.T) {
	m := New(Names{}, WithClusterID("vc-a")) // no prefix: only the internal topics to hide
	resp := kmsg.NewPtrMetadataResponse()
	resp.SetVersion(12)
	resp.ClusterID = kmsg.StringPtr("upstream-id")
	for _, tt := range []struct {
		name     string
		internal bool
	}{{"orders", false}, {"__consumer_offsets", true}, {"__share_group_state", false}, {"__custom_internal", true}} {
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic, rt.IsInternal, rt.TopicID = kmsg.StringPtr(tt.name), tt.internal, [16]byte{byte(len(tt.name))}
		resp.Topics = append(resp.Topics, rt)
	}
	resp = roundTripResponse(t, resp)
	if err := m.MapResponse(nil, resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || *resp.Topics[0].Topic != "orders" {
		t.Fatalf("topics %+v, want orders only", resp.Topics)
	}
	if *resp.ClusterID != "vc-a" {
		t.Errorf("cluster id %q", *resp.ClusterID)
	}

	// The upstream's id is what an ApiVersions v5 naming vc-a is sent.
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(5)
	av.ClusterID, av.NodeID = kmsg.StringPtr("vc-a"), 1
	if _, err := m.MapRequest(context.Background(), av); err != nil {
		t.Fatal(err)
	}
	if av.ClusterID == nil || *av.ClusterID != "upstream-id" || av.NodeID != 1 {
		t.Errorf("ApiVersions cluster id %v node %d, want upstream-id, 1", av.ClusterID, av.NodeID)
	}
}

// Another tenant's id (learned from a Metadata response the Mapper saw) is
// disguised on the way up and the client's again on the way down; the
// tenant's own id passes unchanged.
func TestTopicIDsOfOthersAreDisguised(t *testing.T) {
	m := New(teamANames)
	mine, theirs := [16]byte{1}, [16]byte{2}
	m.LearnTopicID(mine, "team-a.orders")
	m.LearnTopicID(theirs, "team-b.orders")
	ctx := context.Background()
	if got := m.UpTopicID(ctx, mine); got != mine {
		t.Errorf("own id changed to %x", got)
	}
	disguised := m.UpTopicID(ctx, theirs)
	if disguised == theirs || disguised == mine || disguised == ([16]byte{}) {
		t.Fatalf("another tenant's id went up as %x", disguised)
	}
	if got := m.UpTopicID(ctx, [16]byte{3}); got == ([16]byte{3}) {
		t.Error("an id nobody knows went up undisguised")
	}
	if got := m.DownTopicID(disguised); got != theirs {
		t.Errorf("disguise came back as %x, want the client's %x", got, theirs)
	}

	// Fetch v13 with the other's id: the request is mapped and asks for
	// its response to be mapped (to show the client its id again).
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(13)
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = theirs
	req.Topics = append(req.Topics, ft)
	mapResp, err := m.MapRequest(ctx, req)
	if err != nil || !mapResp || req.Topics[0].TopicID != disguised {
		t.Fatalf("fetch v13: mapResponse %v err %v id %x", mapResp, err, req.Topics[0].TopicID)
	}
	if m.ResponseNeed(int16(kmsg.Fetch), 13) != NeedNothing {
		t.Error("fetch v13 responses are not streamed")
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(13)
	rt := kmsg.NewFetchResponseTopic()
	rt.TopicID = disguised
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.ErrorCode = kerr.UnknownTopicID.Code
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	resp = roundTripResponse(t, resp)
	if err := m.MapResponse(req, resp); err != nil || resp.Topics[0].TopicID != theirs {
		t.Fatalf("fetch v13 response id %x err %v, want %x", resp.Topics[0].TopicID, err, theirs)
	}
}

// DescribeTopicPartitions listing every topic starts at the prefix, and a
// next cursor past the tenant's topics ends the listing.
func TestDescribeTopicPartitionsCursor(t *testing.T) {
	m := New(teamANames)
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	if _, err := m.MapRequest(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if req.Cursor == nil || req.Cursor.Topic != "team-a." {
		t.Fatalf("listing every topic starts at %+v, want the prefix", req.Cursor)
	}
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	for _, n := range []string{"team-a.x", "team-b.y"} {
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic = kmsg.StringPtr(n)
		resp.Topics = append(resp.Topics, rt)
	}
	resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: "team-b.z"}
	resp = roundTripResponse(t, resp)
	if err := m.MapResponse(req, resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || *resp.Topics[0].Topic != "x" || resp.NextCursor != nil {
		t.Fatalf("topics %+v cursor %+v, want x and no cursor", resp.Topics, resp.NextCursor)
	}
}

// ElectLeaders for every partition (null) must not reach other tenants',
// even from the virtual cluster's cluster operator.
func TestElectLeadersAllBecomesNone(t *testing.T) {
	m := New(teamANames)
	req := kmsg.NewPtrElectLeadersRequest()
	req.SetVersion(2)
	if _, err := m.MapRequest(AsClusterOperator(context.Background()), req); err != nil {
		t.Fatal(err)
	}
	if req.Topics == nil {
		t.Fatal("null topics (every partition of the cluster) forwarded")
	}
}

// Keys no tenant's client sends but which carry names are refused, raw
// and decoded.
func TestBrokerOnlyKeysRefused(t *testing.T) {
	m := New(teamANames)
	if m.RequestNeed(int16(kmsg.WriteTxnMarkers), 1) == NeedNothing {
		t.Fatal("WriteTxnMarkers streamed")
	}
	if _, _, err := m.MapRawRequest(context.Background(), int16(kmsg.WriteTxnMarkers), 1, nil, nil); err == nil {
		t.Error("WriteTxnMarkers forwarded raw")
	}
	if _, err := m.MapRequest(context.Background(), kmsg.NewPtrLeaderAndISRRequest()); err == nil {
		t.Error("LeaderAndISR forwarded decoded")
	}
}

// Produce v3+ carries the transactional id: prefixed raw as decoded (the
// marker test checks byte equality); a malformed body is refused.
func TestRawProduceRefusesMalformed(t *testing.T) {
	m := New(teamANames)
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	req.TransactionID = kmsg.StringPtr("tx")
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "orders"
	pt.Partitions = append(pt.Partitions, kmsg.ProduceRequestTopicPartition{Records: []byte("batch")})
	req.Topics = append(req.Topics, pt)
	body := req.AppendTo(nil)
	for cut := range len(body) {
		if _, _, err := m.MapRawRequest(context.Background(), int16(kmsg.Produce), 9, body[:cut], nil); err == nil {
			t.Fatalf("a body cut at %d of %d bytes was mapped", cut, len(body))
		}
	}
	out, _, err := m.MapRawRequest(context.Background(), int16(kmsg.Produce), 9, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := kmsg.NewPtrProduceRequest()
	got.SetVersion(9)
	if err := got.ReadFrom(out); err != nil || *got.TransactionID != "team-a.tx" || got.Topics[0].Topic != "team-a.orders" || string(got.Topics[0].Partitions[0].Records) != "batch" {
		t.Fatalf("mapped %+v %v", got, err)
	}
}

// A Produce v13+ to one of the tenant's topics, with no transactional id to
// prefix, is known from its first bytes to need nothing: it stays
// streamed. Anything else is mapped.
func TestProduceStreamsOnlyWhenNothingToMap(t *testing.T) {
	m := New(teamANames)
	mine, theirs := [16]byte{1}, [16]byte{2}
	m.LearnTopicID(mine, "team-a.orders")
	m.LearnTopicID(theirs, "team-b.orders")
	body := func(version int16, txn *string, ids ...[16]byte) []byte {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(version)
		req.TransactionID = txn
		for _, id := range ids {
			pt := kmsg.NewProduceRequestTopic()
			pt.TopicID, pt.Topic = id, "orders"
			pt.Partitions = append(pt.Partitions, kmsg.ProduceRequestTopicPartition{Records: []byte("batch")})
			req.Topics = append(req.Topics, pt)
		}
		return req.AppendTo(nil)
	}
	ctx := context.Background()
	produce := int16(kmsg.Produce)
	if !m.Streams(ctx, produce, 13, body(13, nil, mine)) {
		t.Error("an idempotent produce to the tenant's own topic is not streamed")
	}
	if !m.Streams(ctx, produce, 13, body(13, nil, mine)[:30]) {
		t.Error("the first 30 bytes do not suffice")
	}
	for name, tc := range map[string]struct {
		version int16
		b       []byte
	}{
		"another tenant's id":    {13, body(13, nil, theirs)},
		"two topics":             {13, body(13, nil, mine, mine)},
		"a transactional id":     {13, body(13, kmsg.StringPtr("tx"), mine)},
		"names (v12)":            {12, body(12, nil, mine)},
		"a prefix cut too short": {13, body(13, nil, mine)[:10]},
	} {
		if m.Streams(ctx, produce, tc.version, tc.b) {
			t.Errorf("%s: streamed, want mapped", name)
		}
	}
	if m.Streams(ctx, int16(kmsg.Fetch), 13, body(13, nil, mine)) {
		t.Error("another key streamed by the produce rule")
	}
}
