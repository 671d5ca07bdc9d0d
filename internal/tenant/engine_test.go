package tenant_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/topicids"
)

// tenantProxy is a kproxy in front of c whose clients are the virtual
// cluster of prefix "team-a." with cluster id "vc-a".
func tenantProxy(t *testing.T, c interface{ ListenAddrs() []string }, opts ...tenant.Option) *testkit.Proxy {
	t.Helper()
	names := tenant.Names{Topic: "team-a.", Group: "team-a.", TransactionalID: "team-a."}
	return testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: c.ListenAddrs()}.YAML(), Options: []engine.Option{engine.WithFilters(tenant.New(names, append([]tenant.Option{tenant.WithClusterID("vc-a")}, opts...)...))}})
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
// the internal topics are invisible; the cluster id is the tenant's. With
// today's versions Produce and Fetch name topics by id (request checked,
// response streamed); with Kafka 3.0's by name (Produce rewritten raw,
// Fetch responses rewritten raw).
func TestTenantTopicsThroughKproxy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions *kversion.Versions
	}{{"topic-ids", nil}, {"topic-names", kversion.V3_0_0()}} {
		t.Run(tc.name, func(t *testing.T) { testTenantTopics(t, tc.versions) })
	}
}

func testTenantTopics(t *testing.T, versions *kversion.Versions) {
	c := testkit.Cluster(t, 1, kfake.SeedTopics(1, "team-b.orders"))
	p := tenantProxy(t, c)
	ctx := testkit.Context(t, 30*time.Second)

	opts := []kgo.Opt{kgo.DefaultProduceTopic("orders"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200 * time.Millisecond)}
	if versions != nil {
		opts = append(opts, kgo.MaxVersions(versions))
	}
	cl := client(t, []string{p.BootstrapAddr()}, opts...)
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
	// client asked for (Metadata by id is Kafka 3.1's, v12).
	if versions != nil {
		return
	}
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

// Another tenant's topic id in a Fetch v13+ or Produce v13 request gets
// UNKNOWN_TOPIC_ID for the id the client sent, and nothing of the topic.
func TestOtherTenantsIDUnknownInFetchAndProduce(t *testing.T) {
	c := testkit.Cluster(t, 1, kfake.SeedTopics(1, "team-b.orders"))
	p := tenantProxy(t, c)
	ctx := testkit.Context(t, 30*time.Second)
	upTopics, err := kadm.NewClient(client(t, c.ListenAddrs())).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	otherID := upTopics["team-b.orders"].ID
	cl := client(t, []string{p.BootstrapAddr()})
	if _, err := kadm.NewClient(cl).ListTopics(ctx); err != nil { // the broker list, as a client learns it
		t.Fatal(err)
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(13)
	fetch.MaxWaitMillis, fetch.MaxBytes, fetch.SessionEpoch = 10, 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = otherID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	fr, err := fetch.RequestWith(ctx, cl.Broker(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Topics) != 1 || fr.Topics[0].TopicID != otherID || len(fr.Topics[0].Partitions) != 1 ||
		fr.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code || len(fr.Topics[0].Partitions[0].RecordBatches) != 0 {
		t.Fatalf("fetch by another tenant's id: %+v, want UNKNOWN_TOPIC_ID for the asked id", fr.Topics)
	}

	produce := kmsg.NewPtrProduceRequest()
	produce.SetVersion(13)
	produce.Acks, produce.TimeoutMillis = -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.TopicID = otherID
	pp := kmsg.NewProduceRequestTopicPartition()
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	pr, err := produce.RequestWith(ctx, cl.Broker(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Topics) != 1 || pr.Topics[0].TopicID != otherID || pr.Topics[0].Partitions[0].ErrorCode == 0 {
		t.Fatalf("produce by another tenant's id: %+v, want an error for the asked id", pr.Topics)
	}
	ends, err := kadm.NewClient(client(t, c.ListenAddrs())).ListEndOffsets(ctx, "team-b.orders")
	if err != nil || ends["team-b.orders"][0].Offset != 0 {
		t.Fatalf("team-b.orders end offset %+v %v: another tenant wrote to it", ends, err)
	}
}

// seenNames is a filter recording the topic names Produce and CreateTopics
// requests carry when filters see them.
type seenNames struct {
	mu    sync.Mutex
	names []string
}

func (s *seenNames) Register(r *filter.Registry) {
	filter.OnRequest(r, func(_ *filter.Conn, req *kmsg.CreateTopicsRequest) filter.Verdict {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, t := range req.Topics {
			s.names = append(s.names, t.Topic)
		}
		return filter.Verdict{OnResponse: filter.Then(func(resp *kmsg.CreateTopicsResponse) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, t := range resp.Topics {
				s.names = append(s.names, "response:"+t.Topic)
			}
			for _, t := range req.Topics { // a hook keeping the request sees the client's names
				s.names = append(s.names, "kept:"+t.Topic)
			}
			return nil
		})}
	})
}

// Filters (the policy among them) see the client's names, in requests, in
// the requests their hooks keep, and in responses.
func TestFiltersSeeTheTenantsNames(t *testing.T) {
	c := testkit.Cluster(t, 1)
	seen := &seenNames{}
	names := tenant.Names{Topic: "team-a."}
	p := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: c.ListenAddrs()}.YAML(), Options: []engine.Option{engine.WithFilters(seen), engine.WithFilters(tenant.New(names))}})
	ctx := testkit.Context(t, 30*time.Second)
	if _, err := kadm.NewClient(client(t, []string{p.BootstrapAddr()})).CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if got := strings.Join(seen.names, " "); got != "orders response:orders kept:orders" {
		t.Fatalf("filters saw %q, want the tenant's names throughout", got)
	}
	if topics, err := kadm.NewClient(client(t, c.ListenAddrs())).ListTopics(ctx); err != nil || !topics.Has("team-a.orders") {
		t.Fatalf("upstream topics %v %v", topics.Names(), err)
	}
}

// The tenant's own topic id, learned through another kproxy replica (this
// one never relayed a Metadata naming it), is still the tenant's: the
// Mapper asks the upstream (WithTopicNamer with a topicids.Resolver). Without that it could not tell
// it from another tenant's, and says UNKNOWN_TOPIC_ID.
func TestOwnIDSeenElsewhereIsResolved(t *testing.T) {
	for _, tc := range []struct {
		name     string
		upstream bool
		want     int16
	}{{"resolved", true, 0}, {"unresolved", false, kerr.UnknownTopicID.Code}} {
		t.Run(tc.name, func(t *testing.T) {
			c := testkit.Cluster(t, 1, kfake.SeedTopics(1, "team-a.orders"))
			var opts []tenant.Option
			if tc.upstream {
				opts = append(opts, tenant.WithTopicNamer(topicids.NewResolver(client(t, c.ListenAddrs()), &topicids.Map{})))
			}
			p := tenantProxy(t, c, opts...)
			ctx := testkit.Context(t, 30*time.Second)
			upTopics, err := kadm.NewClient(client(t, c.ListenAddrs())).ListTopics(ctx)
			if err != nil {
				t.Fatal(err)
			}
			raw := testkit.DialRaw(t, p.BootstrapAddr(), "other-replica-client") // no Metadata through this kproxy
			fetch := kmsg.NewPtrFetchRequest()
			fetch.SetVersion(13)
			fetch.MaxWaitMillis, fetch.MaxBytes, fetch.SessionEpoch = 10, 1<<20, -1
			ft := kmsg.NewFetchRequestTopic()
			ft.TopicID = upTopics["team-a.orders"].ID
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.PartitionMaxBytes = 1 << 20
			ft.Partitions = append(ft.Partitions, fp)
			fetch.Topics = append(fetch.Topics, ft)
			fr := raw.MustRoundTrip(t, fetch).(*kmsg.FetchResponse)
			if len(fr.Topics) != 1 || fr.Topics[0].Partitions[0].ErrorCode != tc.want {
				t.Fatalf("fetch by the tenant's own id: %+v, want error %d", fr.Topics, tc.want)
			}
		})
	}
}
