package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/testkit"
)

// TestVirtualClusterPolicyResolvesTenantNames: the topic ids a virtual
// cluster's policy resolves through the upstream are named as the tenant
// names them, and another tenant's are not named: a rule written in the
// tenant's names (a deny of "secret") cannot be slipped past with an id
// this kproxy has not seen.
func TestVirtualClusterPolicyResolvesTenantNames(t *testing.T) {
	cluster := testkit.Cluster(t, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "team-a.secret", "team-b.secret"); err != nil {
		t.Fatal(err)
	}
	md, err := adm.Metadata(ctx, "team-a.secret", "team-b.secret")
	if err != nil {
		t.Fatal(err)
	}
	names := newNameMapper(config.Cluster{Name: "team-a", TopicPrefix: "team-a."}, cl)
	r := tenantRequester{upstream: cl, names: names}
	for topic, want := range map[string]string{"team-a.secret": "secret", "team-b.secret": ""} {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = md.Topics[topic].ID
		req.Topics = append(req.Topics, rt)
		resp, err := r.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, tp := range resp.(*kmsg.MetadataResponse).Topics {
			if tp.Topic != nil && tp.ErrorCode == 0 {
				got = *tp.Topic
			}
		}
		if got != want {
			t.Errorf("the id of %s resolved as %q, want %q", topic, got, want)
		}
	}
}
