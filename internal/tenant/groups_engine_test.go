package tenant_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/testkit"
)

// prefixedProxy is a kproxy in front of c serving the virtual cluster
// whose every kind of name is prefixed with prefix.
func prefixedProxy(t *testing.T, c interface{ ListenAddrs() []string }, prefix string) *testkit.Proxy {
	t.Helper()
	names := tenant.Names{Topic: prefix, Group: prefix, TransactionalID: prefix}
	return testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: c.ListenAddrs()}.YAML(), Options: []engine.Option{engine.WithFilters(tenant.New(names))}})
}

// produceInTxn writes values to orders in one committed transaction of
// transactional id "tx".
func produceInTxn(ctx context.Context, t *testing.T, bootstrap string, values ...string) {
	t.Helper()
	cl := client(t, []string{bootstrap}, kgo.TransactionalID("tx"), kgo.DefaultProduceTopic("orders"))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit transaction: %v", err)
	}
}

// consumeGroup reads n records as a member of group "app" and commits
// them; it returns the values read.
func consumeGroup(ctx context.Context, t *testing.T, bootstrap string, n int, opts ...kgo.Opt) []string {
	t.Helper()
	cl := client(t, []string{bootstrap}, append([]kgo.Opt{kgo.ConsumerGroup("app"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)...)
	var got []string
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic != "orders" {
				t.Errorf("record of topic %q, want orders", r.Topic)
			}
			got = append(got, string(r.Value))
		})
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit offsets: %v", err)
	}
	return got
}

// Two tenants on one cluster, each with a topic `orders`, a transaction of
// id `tx` and a group `app` (team-a's classic, team-b's KIP-848 with the regex .*
// subscription), never see each other's records, groups or transactions;
// upstream everything is prefixed.
func TestTenantGroupsAndTransactionsThroughKproxy(t *testing.T) {
	c := testkit.Cluster(t, 1)
	ctx := testkit.Context(t, 60*time.Second)
	tenants := []struct {
		prefix string
		proxy  *testkit.Proxy
		opts   []kgo.Opt
	}{
		{prefix: "team-a.", opts: []kgo.Opt{kgo.ConsumeTopics("orders")}},
		{prefix: "team-b.", opts: []kgo.Opt{kgo.ConsumeRegex(), kgo.ConsumeTopics(".*"), kgo.ServerSideBalancer()}},
	}
	for i := range tenants {
		tn := &tenants[i]
		tn.proxy = prefixedProxy(t, c, tn.prefix)
		adm := kadm.NewClient(client(t, []string{tn.proxy.BootstrapAddr()}))
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
			t.Fatalf("%s: create orders: %v", tn.prefix, err)
		}
	}
	for _, tn := range tenants {
		produceInTxn(ctx, t, tn.proxy.BootstrapAddr(), tn.prefix+"1", tn.prefix+"2")
	}
	for _, tn := range tenants {
		got := consumeGroup(ctx, t, tn.proxy.BootstrapAddr(), 2, tn.opts...)
		if want := []string{tn.prefix + "1", tn.prefix + "2"}; !slices.Equal(got, want) {
			t.Errorf("%s read %q, want its own %q", tn.prefix, got, want)
		}
	}

	up := kadm.NewClient(client(t, c.ListenAddrs()))
	groups, err := up.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := groups.Groups(); !slices.Contains(g, "team-a.app") || !slices.Contains(g, "team-b.app") || slices.Contains(g, "app") {
		t.Errorf("upstream groups %q, want team-a.app and team-b.app", g)
	}
	if a, b := groups["team-a.app"].GroupType, groups["team-b.app"].GroupType; a != "classic" || b != "consumer" {
		t.Errorf("upstream group types %q and %q, want classic and consumer (KIP-848)", a, b)
	}
	for _, tn := range tenants {
		offs, err := up.FetchOffsets(ctx, tn.prefix+"app")
		if err != nil {
			t.Fatalf("upstream offsets of %sapp: %v", tn.prefix, err)
		}
		// Two records, then the transaction's marker: the commit may stop
		// before or after it.
		if o, ok := offs.Lookup(tn.prefix+"orders", 0); !ok || o.At != 2 && o.At != 3 {
			t.Errorf("upstream %sapp committed %+v on %sorders, want offset 2 or 3", tn.prefix, offs, tn.prefix)
		}
	}
	// Upstream, team-b's regex is confined to its prefix: the broker
	// assigned none of team-a's topics.
	cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cgd.Groups = []string{"team-b.app"}
	described848, err := cgd.RequestWith(ctx, client(t, c.ListenAddrs()))
	if err != nil {
		t.Fatal(err)
	}
	if gs := described848.Groups; len(gs) != 1 || len(gs[0].Members) != 1 {
		t.Fatalf("upstream team-b.app described as %+v", gs)
	}
	member := described848.Groups[0].Members[0]
	if re := member.SubscribedTopicRegex; re != nil && *re != `team-b\.(?:(?-s:.*))` { // kfake does not describe it
		t.Errorf("upstream regex %q, want team-b's prefix before the tenant's", *re)
	}
	upTopics, err := up.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if as := member.Assignment.TopicPartitions; len(as) != 1 || as[0].TopicID != upTopics["team-b.orders"].ID {
		t.Errorf("team-b.app upstream assigned %+v, want team-b.orders (%x) only", as, upTopics["team-b.orders"].ID)
	}

	txns, err := up.ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids := txns.TransactionalIDs(); !slices.Contains(ids, "team-a.tx") || !slices.Contains(ids, "team-b.tx") {
		t.Errorf("upstream transactional ids %q", ids)
	}

	// Each tenant lists and describes only its own.
	for _, tn := range tenants {
		adm := kadm.NewClient(client(t, []string{tn.proxy.BootstrapAddr()}))
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if g := listed.Groups(); !slices.Equal(g, []string{"app"}) {
			t.Errorf("%s lists groups %q, want [app]", tn.prefix, g)
		}
		lt, err := adm.ListTransactions(ctx, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ids := lt.TransactionalIDs(); !slices.Equal(ids, []string{"tx"}) {
			t.Errorf("%s lists transactional ids %q, want [tx]", tn.prefix, ids)
		}
		offs, err := adm.FetchOffsets(ctx, "app")
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := offs.Lookup("orders", 0); !ok || o.At != 2 && o.At != 3 || len(offs) != 1 {
			t.Errorf("%s sees offsets %+v, want orders at 2 or 3 only", tn.prefix, offs)
		}
	}
	described, err := kadm.NewClient(client(t, []string{tenants[0].proxy.BootstrapAddr()})).DescribeGroups(ctx, "app")
	if err != nil {
		t.Fatal(err)
	}
	if d := described["app"]; d.Err != nil || d.ProtocolType != "consumer" {
		t.Errorf("team-a describes app as %+v", d)
	}
}
