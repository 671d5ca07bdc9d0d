package tenant_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/proxy"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/testkit"
)

// tenantProxy is a kproxy in front of c whose clients are the virtual
// cluster of prefix "team-a." with cluster id "vc-a".
func tenantProxy(t *testing.T, c interface{ ListenAddrs() []string }, opts ...tenant.Option) *testkit.Proxy {
	t.Helper()
	names := tenant.Names{Topic: "team-a.", Group: "team-a.", TransactionalID: "team-a."}
	return testkit.StartProxyWith(t, c.ListenAddrs(), "", proxy.WithNameMapper(tenant.New(names, append([]tenant.Option{tenant.WithClusterID("vc-a")}, opts...)...)))
}

func client(t *testing.T, seeds []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// A tenant's client creating, producing to and consuming `orders` works on
// `team-a.orders` upstream; another tenant's topic, by name and by id, and
// the internal topics are invisible; the cluster id is the tenant's.
func TestTenantTopicsThroughKproxy(t *testing.T) {
	c := testkit.Cluster(t, 1, kfake.SeedTopics(1, "team-b.orders"))
	p := tenantProxy(t, c)
	ctx := testkit.Context(t, 30*time.Second)

	cl := client(t, []string{p.BootstrapAddr()}, kgo.DefaultProduceTopic("orders"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatalf("create orders through kproxy: %v", err)
	}
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte('0' + i)}}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	got := 0
	for got < 3 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("fetch: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic != "orders" {
				t.Errorf("record of topic %q, want orders", r.Topic)
			}
			got++
		})
	}

	// Upstream, the topic is the prefixed one.
	up := kadm.NewClient(client(t, c.ListenAddrs()))
	upTopics, err := up.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !upTopics.Has("team-a.orders") || upTopics.Has("orders") {
		t.Fatalf("upstream topics %v, want team-a.orders and no orders", upTopics.Names())
	}
	ends, err := up.ListEndOffsets(ctx, "team-a.orders")
	if err != nil || ends["team-a.orders"][0].Offset != 3 {
		t.Fatalf("team-a.orders end offset %+v %v, want 3", ends, err)
	}

	// The tenant sees its own topic only, never another's or an internal one.
	mine, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := mine.Names(); len(names) != 1 || names[0] != "orders" {
		t.Fatalf("tenant lists topics %v, want [orders]", names)
	}
	meta, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Cluster != "vc-a" {
		t.Errorf("cluster id %q, want the tenant's vc-a", meta.Cluster)
	}

	// Another tenant's topic by name: unknown.
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("team-b.orders")
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("metadata for team-b.orders: %+v, want UNKNOWN_TOPIC_OR_PARTITION", resp.Topics)
	}

	// Another tenant's topic by id: UNKNOWN_TOPIC_ID, no name, the id the
	// client asked for.
	otherID := upTopics["team-b.orders"].ID
	byID := kmsg.NewPtrMetadataRequest()
	idt := kmsg.NewMetadataRequestTopic()
	idt.TopicID = otherID
	byID.Topics = append(byID.Topics, idt)
	idResp, err := byID.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(idResp.Topics) != 1 || idResp.Topics[0].ErrorCode != kerr.UnknownTopicID.Code || idResp.Topics[0].Topic != nil || idResp.Topics[0].TopicID != otherID {
		t.Fatalf("metadata for team-b.orders's id: %+v, want UNKNOWN_TOPIC_ID with no name and the asked id", idResp.Topics)
	}
}
