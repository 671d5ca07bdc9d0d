package e2etenants

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// Per tenant: records produced plainly and in one committed transaction.
const (
	plainRecords = 200
	txnRecords   = 50
)

// TestTwoTenantsClassicGroup and TestTwoTenantsConsumerGroup are the
// documented scenario: two tenants on one kfake, each creating `orders`,
// producing, running a transaction, consuming with group `app` (classic
// JoinGroup/SyncGroup, then KIP-848 ConsumerGroupHeartbeat) and
// committing, with zero crosstalk; the upstream holds the prefixed names.
func TestTwoTenantsClassicGroup(t *testing.T)  { t.Parallel(); twoTenants(t, newEnv(t, 2), false) }
func TestTwoTenantsConsumerGroup(t *testing.T) { t.Parallel(); twoTenants(t, newEnv(t, 2), true) }

// TestTwoTenantsOnKafka is the same scenario in front of the real Kafka
// cluster (KPROXY_KAFKA_BOOTSTRAP), classic then KIP-848: the tenants'
// topics and groups of an earlier run are deleted first.
func TestTwoTenantsOnKafka(t *testing.T) {
	brokers := testkit.RealKafka(t)
	for _, kip848 := range []bool{false, true} {
		t.Run(map[bool]string{false: "classic", true: "kip848"}[kip848], func(t *testing.T) {
			e := newEnvOn(t, brokers)
			e.forgetEarlierRun(testkit.Context(t, 30*time.Second))
			twoTenants(t, e, kip848)
		})
	}
}

// forgetEarlierRun deletes what an earlier run of the scenario left on the
// upstream: the tenants' orders topics and app groups.
func (e *env) forgetEarlierRun(ctx context.Context) {
	e.t.Helper()
	up := kadm.NewClient(e.upstream())
	var topics, groups []string
	for _, tenant := range tenants {
		topics, groups = append(topics, tenant+".orders"), append(groups, tenant+".app")
	}
	// Best effort: on a fresh cluster there is no group coordinator yet
	// (COORDINATOR_NOT_AVAILABLE); a group left over makes the commit
	// check below fail, so nothing is hidden.
	_, _ = up.DeleteGroups(ctx, groups...)
	if _, err := up.DeleteTopics(ctx, topics...); err != nil {
		e.t.Fatalf("delete topics %v: %v", topics, err)
	}
	for { // until no broker lists them: a new topic of the same name must not meet the old
		md, err := up.Metadata(ctx, topics...)
		if err == nil && !slices.ContainsFunc(md.Topics.Names(), func(n string) bool {
			return md.Topics[n].Err == nil
		}) {
			return
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("topics %v still listed: %v", topics, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func twoTenants(t *testing.T, e *env, kip848 bool) {
	ctx := testkit.Context(t, 60*time.Second)
	for _, tenant := range tenants {
		e.createTopic(ctx, tenant, "orders", 3)
	}
	var wg sync.WaitGroup
	for _, tenant := range tenants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.produceAndTransact(ctx, tenant)
			e.consumeOwn(ctx, tenant, kip848)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	up := kadm.NewClient(e.upstream())
	topics, err := up.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := topics.Names(); !slices.Contains(names, "team-a.orders") || !slices.Contains(names, "team-b.orders") || slices.Contains(names, "orders") {
		t.Errorf("upstream topics %v: want team-a.orders and team-b.orders, no unprefixed orders", names)
	}
	groups, err := up.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range tenants {
		group := tenant + ".app"
		if !slices.Contains(groups.Groups(), group) {
			t.Errorf("upstream groups %v lack %s", groups.Groups(), group)
			continue
		}
		offsets, err := up.FetchOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		var committed int64
		offsets.Each(func(o kadm.OffsetResponse) {
			if o.Topic != tenant+".orders" {
				t.Errorf("group %s committed on %s", group, o.Topic)
			}
			committed += o.At
		})
		// Past every record; the transaction's commit marker after them
		// takes one offset more, which a consumer may or may not commit.
		if want := int64(plainRecords + txnRecords); committed != want && committed != want+1 {
			t.Errorf("group %s committed up to %d in all, want %d (or one more, past the commit marker)", group, committed, want)
		}
	}
	txns, err := up.ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range tenants {
		if _, ok := txns[tenant+".tx"]; !ok {
			t.Errorf("upstream transactions %v lack %s.tx", txns.TransactionalIDs(), tenant)
		}
	}
}

// produceAndTransact produces plainRecords to tenant's orders, then
// txnRecords in one committed transaction, every value naming tenant.
func (e *env) produceAndTransact(ctx context.Context, tenant string) {
	e.t.Helper()
	plain := e.client(tenant, kgo.DefaultProduceTopic("orders"))
	rs := make([]*kgo.Record, plainRecords)
	for i := range rs {
		rs[i] = kgo.StringRecord(fmt.Sprintf("%s-%d", tenant, i))
	}
	if err := plain.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		e.t.Errorf("%s produce: %v", tenant, err)
		return
	}
	txn := e.client(tenant, kgo.DefaultProduceTopic("orders"), kgo.TransactionalID("tx"))
	if err := txn.BeginTransaction(); err != nil {
		e.t.Errorf("%s begin: %v", tenant, err)
		return
	}
	rs = make([]*kgo.Record, txnRecords)
	for i := range rs {
		rs[i] = kgo.StringRecord(fmt.Sprintf("%s-txn-%d", tenant, i))
	}
	if err := txn.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		e.t.Errorf("%s transactional produce: %v", tenant, err)
		return
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		e.t.Errorf("%s commit: %v", tenant, err)
	}
}

// consumeOwn consumes tenant's orders with group app, read committed,
// and checks that every record is the tenant's own and none is missing;
// then it commits.
func (e *env) consumeOwn(ctx context.Context, tenant string, kip848 bool) {
	e.t.Helper()
	opts := []kgo.Opt{kgo.ConsumerGroup("app"), kgo.ConsumeTopics("orders"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit()}
	if kip848 {
		opts = append(opts, kgo.ServerSideBalancer())
	}
	cl := e.client(tenant, opts...)
	seen := map[string]bool{}
	for len(seen) < plainRecords+txnRecords {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			e.t.Errorf("%s consumed %d of %d records: %v", tenant, len(seen), plainRecords+txnRecords, err)
			return
		}
		fs.EachError(func(topic string, p int32, err error) { e.t.Errorf("%s fetch %s/%d: %v", tenant, topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic != "orders" || !strings.HasPrefix(string(r.Value), tenant+"-") {
				e.t.Errorf("%s read %q from topic %q: crosstalk", tenant, r.Value, r.Topic)
			}
			seen[string(r.Value)] = true
		})
	}
	if len(seen) != plainRecords+txnRecords {
		e.t.Errorf("%s read %d distinct records, want %d", tenant, len(seen), plainRecords+txnRecords)
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		e.t.Errorf("%s commit offsets: %v", tenant, err)
	}
}

// TestCrossTenantProbes: team-a asks for team-b's topic by name, by topic
// id, by regex subscription and through DescribeTopicPartitions' cursor,
// and learns nothing of it; it is told its own cluster id.
func TestCrossTenantProbes(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t, 30*time.Second)
	e := newEnv(t, 1)
	e.createTopic(ctx, "team-b", "secret", 1)
	e.createTopic(ctx, "team-a", "orders", 1)
	if err := e.client("team-b", kgo.DefaultProduceTopic("secret")).ProduceSync(ctx, kgo.StringRecord("team-b-private")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	upMeta, err := kadm.NewClient(e.upstream()).Metadata(ctx, "team-b.secret")
	if err != nil {
		t.Fatal(err)
	}
	secretID := upMeta.Topics["team-b.secret"].ID
	a := e.client("team-a")

	// By name: the prefixed and the tenant's own spelling.
	for _, name := range []string{"team-b.secret", "secret"} {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || len(resp.Topics[0].Partitions) != 0 {
			t.Errorf("Metadata for %q: %+v, want UNKNOWN_TOPIC_OR_PARTITION and nothing more", name, resp.Topics)
		}
		if id := kmsg.StringPtr(""); resp.ClusterID == nil || *resp.ClusterID != "team-a-cluster" {
			if resp.ClusterID != nil {
				id = resp.ClusterID
			}
			t.Errorf("Metadata cluster id %q, want team-a's own", *id)
		}
	}
	// Every topic: only team-a's own, unprefixed.
	all, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range all.Topics {
		if tp.Topic == nil || *tp.Topic != "orders" {
			t.Errorf("team-a's Metadata lists topic %q", *topicName(tp.Topic))
		}
	}

	// By topic id.
	byID := kmsg.NewPtrMetadataRequest()
	idt := kmsg.NewMetadataRequestTopic()
	idt.TopicID = secretID
	byID.Topics = append(byID.Topics, idt)
	byID.Version = 12
	resp, err := byID.RequestWith(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	// Learning nothing: no topic at all, or UNKNOWN_TOPIC_ID without a name.
	for _, tp := range resp.Topics {
		if tp.ErrorCode != kerr.UnknownTopicID.Code || *topicName(tp.Topic) != "" || len(tp.Partitions) != 0 {
			t.Errorf("Metadata by team-b's topic id: topic %q error %d with %d partitions, want UNKNOWN_TOPIC_ID and no name",
				*topicName(tp.Topic), tp.ErrorCode, len(tp.Partitions))
		}
	}
	fetch := testkit.FetchByID(13, secretID)
	fresp, err := fetch.RequestWith(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range fresp.Topics {
		for _, fp := range ft.Partitions {
			if fp.ErrorCode != kerr.UnknownTopicID.Code || len(fp.RecordBatches) != 0 {
				t.Errorf("Fetch by team-b's topic id: partition error %d with %d bytes, want UNKNOWN_TOPIC_ID and none", fp.ErrorCode, len(fp.RecordBatches))
			}
		}
	}

	// By regex subscription, classic and KIP-848: only team-a's own topic.
	for _, kip848 := range []bool{false, true} {
		opts := []kgo.Opt{kgo.ConsumerGroup(fmt.Sprintf("regex-%v", kip848)), kgo.ConsumeRegex(), kgo.ConsumeTopics(".*"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100 * time.Millisecond)}
		if kip848 {
			opts = append(opts, kgo.ServerSideBalancer())
		}
		cl := e.client("team-a", opts...)
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		for pctx.Err() == nil {
			cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
				t.Errorf("regex subscription (KIP-848 %v) of team-a read %q from %q", kip848, r.Value, r.Topic)
			})
		}
		cancel()
		for _, topic := range cl.GetConsumeTopics() {
			if topic != "orders" {
				t.Errorf("regex subscription (KIP-848 %v) of team-a matched %q", kip848, topic)
			}
		}
	}

	// DescribeTopicPartitions from a cursor at team-b's topic.
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "team-b.secret"}
	dtp.ResponsePartitionLimit = 100
	dresp, err := dtp.RequestWith(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range dresp.Topics {
		if tp.Topic == nil || *tp.Topic != "orders" {
			t.Errorf("DescribeTopicPartitions from a cursor lists %q (error %d)", *topicName(tp.Topic), tp.ErrorCode)
		}
	}
	if c := dresp.NextCursor; c != nil && c.Topic != "orders" {
		t.Errorf("DescribeTopicPartitions next cursor %q", c.Topic)
	}
	named := kmsg.NewPtrDescribeTopicPartitionsRequest()
	nt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	nt.Topic = "team-b.secret"
	named.Topics = append(named.Topics, nt)
	named.ResponsePartitionLimit = 100
	nresp, err := named.RequestWith(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(nresp.Topics) != 1 || nresp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || nresp.Topics[0].TopicID != [16]byte{} {
		t.Errorf("DescribeTopicPartitions of team-b's topic: %+v, want UNKNOWN_TOPIC_OR_PARTITION and no id", nresp.Topics)
	}

	labelled := false
	for _, l := range strings.Split(e.metrics(), "\n") {
		labelled = labelled || strings.HasPrefix(l, `kproxy_requests_total{api="Metadata"`) && strings.Contains(l, `virtual_cluster="team-a"`)
	}
	if !labelled {
		t.Errorf("no kproxy_requests_total series of Metadata labelled virtual_cluster=team-a")
	}
}

// topicName is a response's nullable topic name, "" for null.
func topicName(s *string) *string {
	if s == nil {
		return kmsg.StringPtr("")
	}
	return s
}
