package tenant

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// team-a creates a PREFIXED "" DENY ACL: sent upstream unprefixed it would
// match every tenant's topics. kproxy answers as Kafka does, INVALID_REQUEST
// "Resource name should not be empty", for that creation; nothing reaches
// the upstream, which holds no such ACL.
func TestACLEmptyResourceNameRefused(t *testing.T) {
	e := newAdminEnv(t)
	e.watch(kmsg.CreateACLs)
	alice := e.dialAs("team-a", "alice")
	for _, rt := range []kmsg.ACLResourceType{kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeTransactionalId} {
		req := kmsg.NewPtrCreateACLsRequest()
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, "", kmsg.ACLResourcePatternTypePrefixed
		c.Principal, c.Host, c.Operation, c.PermissionType = "User:*", "*", kmsg.ACLOperationAll, kmsg.ACLPermissionTypeDeny
		req.Creations = append(req.Creations, c)
		r := alice.MustRoundTrip(t, req).(*kmsg.CreateACLsResponse)
		if len(r.Results) != 1 || r.Results[0].ErrorCode != kerr.InvalidRequest.Code ||
			r.Results[0].ErrorMessage == nil || *r.Results[0].ErrorMessage != "Resource name should not be empty" {
			t.Errorf("%v PREFIXED \"\" DENY: %+v, want INVALID_REQUEST \"Resource name should not be empty\"", rt, r.Results)
		}
	}
	if n := e.received(kmsg.CreateACLs); n != 0 {
		t.Errorf("the upstream received %d CreateAcls from the tenant, want none", n)
	}
	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.ResourceType, describe.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	d := e.ask(describe).(*kmsg.DescribeACLsResponse)
	if d.ErrorCode != 0 || len(d.Resources) != 0 {
		t.Errorf("upstream ACLs after the attack: error %d, %+v; want none", d.ErrorCode, d.Resources)
	}
}
