package tenant

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	topicACL   = kmsg.ACLResourceTypeTopic
	groupACL   = kmsg.ACLResourceTypeGroup
	clusterACL = kmsg.ACLResourceTypeCluster
	anyType    = kmsg.ACLResourceTypeAny
	literal    = kmsg.ACLResourcePatternTypeLiteral
	prefixed   = kmsg.ACLResourcePatternTypePrefixed
	anyPattern = kmsg.ACLResourcePatternTypeAny
	match      = kmsg.ACLResourcePatternTypeMatch
)

func creation(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
	c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	return c
}

func TestCreateACLsPrefixed(t *testing.T) {
	r := kmsg.NewPtrCreateACLsRequest()
	r.Version = 3
	r.Creations = []kmsg.CreateACLsRequestCreation{
		creation(topicACL, "orders", literal),
		creation(topicACL, "ord", prefixed),
		creation(groupACL, "*", literal),
	}
	up, a := upReq(t, New(teamANames), r)
	if a != nil {
		t.Fatal("answered")
	}
	want := []struct {
		name string
		pt   kmsg.ACLResourcePatternType
	}{{"team-a.orders", literal}, {"team-a.ord", prefixed}, {"team-a.", prefixed}}
	for i, w := range want {
		if c := up.Creations[i]; c.ResourceName != w.name || c.ResourcePatternType != w.pt || c.Principal != "User:alice" {
			t.Errorf("creation %d upstream %s %v, want %s %v", i, c.ResourceName, c.ResourcePatternType, w.name, w.pt)
		}
	}
}

func TestCreateClusterACLRefused(t *testing.T) {
	r := kmsg.NewPtrCreateACLsRequest()
	r.Version = 2
	r.Creations = []kmsg.CreateACLsRequestCreation{creation(topicACL, "orders", literal), creation(clusterACL, "kafka-cluster", literal)}
	_, a := upReq(t, New(teamANames), r)
	resp := answered[*kmsg.CreateACLsResponse](t, a)
	if len(resp.Results) != 2 || resp.Results[1].ErrorCode != kerr.ClusterAuthorizationFailed.Code || resp.Results[0].ErrorCode == 0 {
		t.Fatalf("answer %+v", resp.Results)
	}
}

func describeFilter(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType) *kmsg.DescribeACLsRequest {
	r := kmsg.NewPtrDescribeACLsRequest()
	r.Version, r.ResourceType, r.ResourceName, r.ResourcePatternType = 3, rt, name, pt
	r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	return r
}

// upstreamACLs is what a shared cluster holds: the tenant's, another
// tenant's, the operator's cluster-wide wildcard and short prefix, a
// cluster ACL.
func upstreamACLs() []kmsg.DescribeACLsResponseResource {
	var out []kmsg.DescribeACLsResponseResource
	for _, a := range []struct {
		rt   kmsg.ACLResourceType
		name string
		pt   kmsg.ACLResourcePatternType
	}{
		{topicACL, "team-a.orders", literal}, {topicACL, "team-a.", prefixed}, {topicACL, "team-a.ord", prefixed},
		{topicACL, "team-b.orders", literal}, {topicACL, "*", literal}, {topicACL, "team-", prefixed},
		{clusterACL, "kafka-cluster", literal}, {groupACL, "team-a.app", literal},
	} {
		res := kmsg.NewDescribeACLsResponseResource()
		res.ResourceType, res.ResourceName, res.ResourcePatternType = a.rt, a.name, a.pt
		res.ACLs = []kmsg.DescribeACLsResponseResourceACL{{Principal: "User:x", Host: "*", Operation: kmsg.ACLOperationAll, PermissionType: kmsg.ACLPermissionTypeAllow}}
		out = append(out, res)
	}
	return out
}

type shownACL struct {
	rt   kmsg.ACLResourceType
	name string
	pt   kmsg.ACLResourcePatternType
}

func TestDescribeACLsShowsOnlyTheTenants(t *testing.T) {
	m := New(teamANames)
	for _, tc := range []struct {
		filter       *kmsg.DescribeACLsRequest
		upName       *string
		upPT         kmsg.ACLResourcePatternType
		wantFromAll  []shownACL
		answeredCode int16
	}{
		{filter: describeFilter(anyType, nil, anyPattern), upPT: anyPattern,
			wantFromAll: []shownACL{{topicACL, "orders", literal}, {topicACL, "*", literal}, {topicACL, "ord", prefixed}, {groupACL, "app", literal}}},
		{filter: describeFilter(topicACL, kmsg.StringPtr("orders"), match), upName: kmsg.StringPtr("team-a.orders"), upPT: match,
			wantFromAll: []shownACL{{topicACL, "orders", literal}, {topicACL, "*", literal}, {topicACL, "ord", prefixed}, {groupACL, "app", literal}}},
		{filter: describeFilter(topicACL, kmsg.StringPtr("*"), literal), upName: kmsg.StringPtr("team-a."), upPT: prefixed},
		{filter: describeFilter(topicACL, nil, prefixed), upPT: prefixed,
			wantFromAll: []shownACL{{topicACL, "orders", literal}, {topicACL, "ord", prefixed}, {groupACL, "app", literal}}},
		{filter: describeFilter(clusterACL, nil, anyPattern), answeredCode: 0},
	} {
		up, a := upReq(t, m, tc.filter)
		if tc.filter.ResourceType == clusterACL {
			if resp := answered[*kmsg.DescribeACLsResponse](t, a); len(resp.Resources) != 0 || resp.ErrorCode != tc.answeredCode {
				t.Errorf("cluster filter answered %+v", resp)
			}
			continue
		}
		if a != nil {
			t.Fatalf("filter %+v answered", tc.filter)
		}
		if (up.ResourceName == nil) != (tc.upName == nil) || up.ResourceName != nil && *up.ResourceName != *tc.upName || up.ResourcePatternType != tc.upPT {
			t.Errorf("filter %v %v upstream %v %v", tc.filter.ResourceName, tc.filter.ResourcePatternType, up.ResourceName, up.ResourcePatternType)
		}
		if tc.wantFromAll == nil {
			continue
		}
		resp := kmsg.NewPtrDescribeACLsResponse()
		resp.Version, resp.Resources = 3, upstreamACLs()
		got := downResp(t, m, up, resp)
		var shown []shownACL
		for _, r := range got.Resources {
			shown = append(shown, shownACL{r.ResourceType, r.ResourceName, r.ResourcePatternType})
		}
		if len(shown) != len(tc.wantFromAll) {
			t.Errorf("filter %v %v shows %v, want %v", tc.filter.ResourceName, tc.filter.ResourcePatternType, shown, tc.wantFromAll)
			continue
		}
		for _, w := range tc.wantFromAll {
			if !containsACL(shown, w) {
				t.Errorf("filter %v %v shows %v, want %v", tc.filter.ResourceName, tc.filter.ResourcePatternType, shown, tc.wantFromAll)
			}
		}
	}
}

func containsACL(list []shownACL, a shownACL) bool {
	for _, l := range list {
		if l == a {
			return true
		}
	}
	return false
}

func deleteFilter(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType) kmsg.DeleteACLsRequestFilter {
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = rt, name, pt
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	return f
}

// TestDeleteACLsNeverReachesOthers: every filter that would match another
// tenant's or the operator's ACLs upstream is refused, and nothing of the
// request goes upstream.
func TestDeleteACLsNeverReachesOthers(t *testing.T) {
	m := New(teamANames)
	for _, f := range []kmsg.DeleteACLsRequestFilter{
		deleteFilter(topicACL, nil, anyPattern),
		deleteFilter(topicACL, nil, match),
		deleteFilter(topicACL, kmsg.StringPtr("orders"), match),
		deleteFilter(anyType, kmsg.StringPtr("orders"), literal),
		deleteFilter(topicACL, kmsg.StringPtr("*"), anyPattern),
		deleteFilter(topicACL, kmsg.StringPtr(""), prefixed),
		deleteFilter(clusterACL, kmsg.StringPtr("kafka-cluster"), literal),
		deleteFilter(kmsg.ACLResourceTypeUser, nil, anyPattern),
	} {
		r := kmsg.NewPtrDeleteACLsRequest()
		r.Version = 3
		r.Filters = []kmsg.DeleteACLsRequestFilter{deleteFilter(topicACL, kmsg.StringPtr("orders"), literal), f}
		_, a := upReq(t, m, r)
		resp := answered[*kmsg.DeleteACLsResponse](t, a)
		if len(resp.Results) != 2 || resp.Results[0].ErrorCode == 0 || resp.Results[1].ErrorCode == 0 {
			t.Errorf("filter %v %v %v: answer %+v", f.ResourceType, f.ResourceName, f.ResourcePatternType, resp.Results)
		}
	}
}

func TestDeleteACLsConfined(t *testing.T) {
	m := New(teamANames)
	r := kmsg.NewPtrDeleteACLsRequest()
	r.Version = 3
	r.Filters = []kmsg.DeleteACLsRequestFilter{
		deleteFilter(topicACL, kmsg.StringPtr("orders"), literal),
		deleteFilter(topicACL, kmsg.StringPtr("*"), literal),
		deleteFilter(groupACL, kmsg.StringPtr("app"), anyPattern),
		deleteFilter(topicACL, kmsg.StringPtr("ord"), prefixed),
	}
	up, a := upReq(t, m, r)
	if a != nil {
		t.Fatalf("answered %+v", a.Response)
	}
	want := []shownACL{{topicACL, "team-a.orders", literal}, {topicACL, "team-a.", prefixed}, {groupACL, "team-a.app", anyPattern}, {topicACL, "team-a.ord", prefixed}}
	for i, w := range want {
		f := up.Filters[i]
		if f.ResourceType != w.rt || *f.ResourceName != w.name || f.ResourcePatternType != w.pt {
			t.Errorf("filter %d upstream %v %q %v, want %v", i, f.ResourceType, *f.ResourceName, f.ResourcePatternType, w)
		}
	}
	resp := kmsg.NewPtrDeleteACLsResponse()
	resp.Version = 3
	res := kmsg.NewDeleteACLsResponseResult()
	for _, a := range []shownACL{{topicACL, "team-a.", prefixed}, {topicACL, "team-b.orders", literal}} {
		ma := kmsg.NewDeleteACLsResponseResultMatchingACL()
		ma.ResourceType, ma.ResourceName, ma.ResourcePatternType = a.rt, a.name, a.pt
		res.MatchingACLs = append(res.MatchingACLs, ma)
	}
	resp.Results = []kmsg.DeleteACLsResponseResult{res, kmsg.NewDeleteACLsResponseResult(), kmsg.NewDeleteACLsResponseResult(), kmsg.NewDeleteACLsResponseResult()}
	got := downResp(t, m, up, resp)
	if ms := got.Results[0].MatchingACLs; len(ms) != 1 || ms[0].ResourceName != "*" || ms[0].ResourcePatternType != literal {
		t.Errorf("matching down %+v", ms)
	}
}
