package tenant_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

type aclRef struct {
	rt   kmsg.ACLResourceType
	name string
	pt   kmsg.ACLResourcePatternType
}

func createACLs(ctx context.Context, t *testing.T, cl *kgo.Client, acls ...aclRef) *kmsg.CreateACLsResponse {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	for _, a := range acls {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = a.rt, a.name, a.pt
		c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("create ACLs: %v", err)
	}
	return resp
}

// allACLs is every ACL the client's cluster describes.
func allACLs(ctx context.Context, t *testing.T, cl *kgo.Client) []aclRef {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("describe ACLs: %v %+v", err, resp)
	}
	var out []aclRef
	for _, r := range resp.Resources {
		out = append(out, aclRef{r.ResourceType, r.ResourceName, r.ResourcePatternType})
	}
	return out
}

func deleteACLs(ctx context.Context, t *testing.T, cl *kgo.Client, rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType) *kmsg.DeleteACLsResponse {
	t.Helper()
	req := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = rt, name, pt
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	req.Filters = append(req.Filters, f)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("delete ACLs: %v", err)
	}
	return resp
}

// A tenant's ACLs land on its prefixed resources; another tenant can
// neither see them nor delete them with a wide filter, and neither can
// reach the operator's cluster-wide ACLs or create a cluster ACL.
func TestTenantACLsThroughKproxy(t *testing.T) {
	c := testkit.Cluster(t, 1)
	ctx := testkit.Context(t, 30*time.Second)
	a := client(t, []string{prefixedProxy(t, c, "team-a.").BootstrapAddr()})
	b := client(t, []string{prefixedProxy(t, c, "team-b.").BootstrapAddr()})
	up := client(t, c.ListenAddrs())

	lit, pre := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	topic, group, cluster := kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeCluster
	for _, r := range createACLs(ctx, t, up, aclRef{topic, "*", lit}, aclRef{topic, "team-", pre}).Results {
		if r.ErrorCode != 0 {
			t.Fatalf("operator's ACLs: %+v", r)
		}
	}
	for _, r := range createACLs(ctx, t, a, aclRef{topic, "orders", lit}, aclRef{topic, "*", lit}, aclRef{group, "app", pre}).Results {
		if r.ErrorCode != 0 {
			t.Fatalf("team-a's ACLs: %+v", r)
		}
	}
	if r := createACLs(ctx, t, b, aclRef{cluster, "kafka-cluster", lit}).Results; r[0].ErrorCode == 0 {
		t.Errorf("team-b created a cluster ACL")
	}
	upstreamBefore := allACLs(ctx, t, up)
	for _, want := range []aclRef{{topic, "team-a.orders", lit}, {topic, "team-a.", pre}, {group, "team-a.app", pre}} {
		if !slices.Contains(upstreamBefore, want) {
			t.Errorf("upstream ACLs %v lack %v", upstreamBefore, want)
		}
	}

	mine := allACLs(ctx, t, a)
	slices.SortFunc(mine, func(x, y aclRef) int { return cmp.Or(cmp.Compare(x.rt, y.rt), strings.Compare(x.name, y.name)) })
	if want := []aclRef{{topic, "*", lit}, {topic, "orders", lit}, {group, "app", pre}}; !slices.Equal(mine, want) {
		t.Errorf("team-a describes %v, want %v", mine, want)
	}
	if theirs := allACLs(ctx, t, b); len(theirs) != 0 {
		t.Errorf("team-b describes %v, want nothing", theirs)
	}

	// Wide delete filters from team-b: refused, nothing deleted upstream.
	for _, f := range []struct {
		rt   kmsg.ACLResourceType
		name *string
		pt   kmsg.ACLResourcePatternType
	}{
		{kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny},
		{topic, nil, kmsg.ACLResourcePatternTypeMatch},
		{topic, kmsg.StringPtr("orders"), kmsg.ACLResourcePatternTypeMatch},
		{topic, kmsg.StringPtr("*"), kmsg.ACLResourcePatternTypeAny},
	} {
		if resp := deleteACLs(ctx, t, b, f.rt, f.name, f.pt); resp.Results[0].ErrorCode == 0 {
			t.Errorf("team-b's delete filter %v %v %v was run: %+v", f.rt, f.name, f.pt, resp.Results[0])
		}
	}
	if after := allACLs(ctx, t, up); len(after) != len(upstreamBefore) {
		t.Fatalf("upstream ACLs went from %v to %v", upstreamBefore, after)
	}

	// team-a deletes its own, by the names it knows.
	resp := deleteACLs(ctx, t, a, topic, kmsg.StringPtr("*"), lit)
	if r := resp.Results[0]; r.ErrorCode != 0 || len(r.MatchingACLs) != 1 || r.MatchingACLs[0].ResourceName != "*" {
		t.Fatalf("team-a deletes its LITERAL *: %+v", r)
	}
	after := allACLs(ctx, t, up)
	if slices.Contains(after, aclRef{topic, "team-a.", pre}) || !slices.Contains(after, aclRef{topic, "*", lit}) || !slices.Contains(after, aclRef{topic, "team-a.orders", lit}) {
		t.Errorf("upstream after team-a's delete: %v", after)
	}
}
