package tenant

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// An ACL on the empty name would go upstream without the tenant's prefix,
// where a PREFIXED "" DENY matches every tenant's resources: kproxy
// answers as Kafka does, whatever the tenant's prefixes (an empty prefix
// included), for every resource type a tenant may have ACLs on.
func TestCreateACLsEmptyNameRefused(t *testing.T) {
	for _, names := range []Names{teamANames, {}} {
		for _, rt := range []kmsg.ACLResourceType{topicACL, groupACL, kmsg.ACLResourceTypeTransactionalId} {
			for _, pt := range []kmsg.ACLResourcePatternType{prefixed, literal} {
				r := kmsg.NewPtrCreateACLsRequest()
				r.Version = 3
				deny := creation(rt, "", pt)
				deny.PermissionType = kmsg.ACLPermissionTypeDeny
				r.Creations = []kmsg.CreateACLsRequestCreation{creation(topicACL, "orders", literal), deny}
				_, a := upReq(t, New(names), r)
				if a == nil {
					t.Fatalf("prefixes %+v: %v %v \"\" DENY forwarded upstream", names, rt, pt)
				}
				resp := answered[*kmsg.CreateACLsResponse](t, a)
				if len(resp.Results) != 2 {
					t.Fatalf("%d results, want 2", len(resp.Results))
				}
				got := resp.Results[1]
				if got.ErrorCode != kerr.InvalidRequest.Code || got.ErrorMessage == nil || *got.ErrorMessage != "Resource name should not be empty" {
					t.Errorf("prefixes %+v: %v %v \"\": error %d %v, want INVALID_REQUEST \"Resource name should not be empty\"", names, rt, pt, got.ErrorCode, got.ErrorMessage)
				}
				if resp.Results[0].ErrorCode == 0 {
					t.Errorf("the other creation reported created, but the request was not forwarded")
				}
			}
		}
	}
}
