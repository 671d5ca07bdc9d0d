package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

const goRecords = 2000

func init() {
	register("franz-go", "produce-consume", franzProduceConsume)
	register("franz-go", "resume", franzResume)
	register("franz-go", "kip848", franzKIP848)
	register("franz-go", "admin", franzAdmin)
	register("franz-go", "transactions", franzTransactions)
	register("franz-go", "addresses", franzAddresses)
	register("franz-go", "tls-scram", franzTLSSCRAM)
	register("franz-go", "sni", franzTLSSCRAM)
}

// franzProduce produces rs to topic (kgo's defaults: idempotent, acks=all)
// and fails t on any error.
func franzProduce(t *testing.T, cl *kgo.Client, topic string, rs []rec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	krs := make([]*kgo.Record, len(rs))
	for i, r := range rs {
		krs[i] = &kgo.Record{Topic: topic, Key: []byte(r.key), Value: []byte(r.value)}
	}
	if err := cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		t.Fatalf("franz-go produce: %v", err)
	}
}

// franzConsumeGroup joins group with its own client, consumes until it has
// n records, commits and leaves.
func franzConsumeGroup(t *testing.T, seeds []string, group, topic string, n int, opts ...kgo.Opt) []got {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.DisableAutoCommit(),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	gs := pollN(t, ctx, cl, n)
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("franz-go commit: %v", err)
	}
	return gs
}

// pollN polls cl until it has n records.
func pollN(t *testing.T, ctx context.Context, cl *kgo.Client, n int) []got {
	t.Helper()
	var gs []got
	for len(gs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go consumed %d of %d records: %v", len(gs), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Errorf("franz-go fetch %s/%d: %v", topic, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			gs = append(gs, got{r.Partition, r.Offset, string(r.Key), string(r.Value)})
		})
		if t.Failed() {
			t.FailNow()
		}
	}
	return gs
}

func franzProduceConsume(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	want := makeRecs("franz", goRecords)
	franzProduce(t, e.kgoClient(t), topic, want)
	group := name(c, "g")
	gs := franzConsumeGroup(t, []string{e.bootstrap()}, group, topic, len(want))
	checkRecords(t, "franz-go group", gs, want)
	e.checkCommitted(t, group, topic, int64(len(want)))
}

func franzResume(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	prod := e.kgoClient(t)
	first := makeRecs("first", goRecords)
	franzProduce(t, prod, topic, first)
	checkRecords(t, "first session", franzConsumeGroup(t, []string{e.bootstrap()}, group, topic, len(first)), first)
	e.checkCommitted(t, group, topic, int64(len(first)))
	second := makeRecs("second", 300)
	franzProduce(t, prod, topic, second)
	checkRecords(t, "second session (from the commits)", franzConsumeGroup(t, []string{e.bootstrap()}, group, topic, len(second)), second)
	e.checkCommitted(t, group, topic, int64(len(first)+len(second)))
}

// franzKIP848: the next-generation group protocol (ConsumerGroupHeartbeat,
// server-side assignment), checked on the wire: no JoinGroup at all.
func franzKIP848(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	want := makeRecs("kip848", goRecords)
	franzProduce(t, e.kgoClient(t), topic, want)
	s := testkit.NewSniffer()
	gs := franzConsumeGroup(t, []string{e.bootstrap()}, group, topic, len(want),
		kgo.Dialer(s.Dial), kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer())
	checkRecords(t, "franz-go KIP-848 group", gs, want)
	e.checkCommitted(t, group, topic, int64(len(want)))
	if n := s.Requests(int16(kmsg.ConsumerGroupHeartbeat)); n == 0 {
		t.Errorf("franz-go sent no ConsumerGroupHeartbeat: it fell back to the classic protocol")
	} else {
		c.note("%d ConsumerGroupHeartbeat", n)
	}
	if n := s.Requests(int16(kmsg.JoinGroup)); n != 0 {
		t.Errorf("franz-go sent %d JoinGroup requests in KIP-848 mode", n)
	}
	for _, err := range s.Errors() {
		t.Error(err)
	}
	for _, a := range s.Addrs() {
		e.checkNodeAddr(t, e.plain, a.String(), a.NodeID, a.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dg, err := e.admin(t).DescribeConsumerGroups(ctx, group)
	if err != nil {
		t.Fatalf("describe consumer group (ConsumerGroupDescribe): %v", err)
	}
	if g, ok := dg[group]; !ok || g.Err != nil {
		t.Errorf("ConsumerGroupDescribe %s: %+v", group, g)
	}
}

func franzAdmin(t *testing.T, c *cellCtx, e *env) {
	adm := e.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	topic := name(c, "t")

	// Create and describe.
	resp, err := adm.CreateTopic(ctx, 3, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	e.waitTopic(t, ctx, adm, topic, 3)
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	for _, b := range md.Brokers {
		e.checkNodeAddr(t, e.plain, "kadm Metadata", b.NodeID, fmt.Sprintf("%s:%d", b.Host, b.Port))
	}

	// Alter and describe a config.
	if r, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("3600000")}}, topic); err != nil || r[0].Err != nil {
		t.Fatalf("alter topic config: %v %v", err, r)
	}
	// Brokers apply config changes from the metadata log: another broker
	// may answer with the old value for a moment.
	for deadline := time.Now().Add(15 * time.Second); ; {
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err == nil {
			var rc kadm.ResourceConfig
			if rc, err = rcs.On(topic, nil); err == nil && configValue(rc.Configs, "retention.ms") == "3600000" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("retention.ms not 3600000 after the alter (%v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// More partitions.
	if r, err := adm.CreatePartitions(ctx, 2, topic); err != nil || r[topic].Err != nil {
		t.Fatalf("create partitions: %v %v", err, r)
	}
	e.waitTopic(t, ctx, adm, topic, 5)

	// A group: describe it, then delete it.
	group := name(c, "g")
	franzProduce(t, e.kgoClient(t), topic, makeRecs("admin", 100))
	franzConsumeGroup(t, []string{e.bootstrap()}, group, topic, 100)
	dg, err := adm.DescribeGroups(ctx, group)
	if err != nil || dg[group].Err != nil {
		t.Fatalf("describe group: %v %v", err, dg[group].Err)
	}
	if st := dg[group].State; st != "Empty" {
		t.Errorf("group %s is %s after its only member left, want Empty", group, st)
	}
	if dg[group].Coordinator.Host != "" {
		e.checkNodeAddr(t, e.plain, "DescribeGroups coordinator", dg[group].Coordinator.NodeID,
			fmt.Sprintf("%s:%d", dg[group].Coordinator.Host, dg[group].Coordinator.Port))
	}
	lg, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatalf("list groups: %v", err)
	}
	if _, ok := lg[group]; !ok {
		t.Errorf("ListGroups does not list %s", group)
	}
	if r, err := adm.DeleteGroups(ctx, group); err != nil || r[group].Err != nil {
		t.Fatalf("delete group: %v %v", err, r[group].Err)
	}
	dg, err = adm.DescribeGroups(ctx, group)
	if err == nil && dg[group].Err == nil && dg[group].State != "Dead" {
		t.Errorf("group %s is %s after its deletion, want Dead or not found", group, dg[group].State)
	}

	// Delete the topic.
	if r, err := adm.DeleteTopics(ctx, topic); err != nil || r[topic].Err != nil {
		t.Fatalf("delete topic: %v %v", err, r)
	}
	for {
		td, err := adm.ListTopics(ctx)
		if err == nil && !td.Has(topic) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("topic %s still listed after its deletion", topic)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func configValue(cs []kadm.Config, key string) string {
	for _, c := range cs {
		if c.Key == key && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}

// txnBatches are three transactions, in order: committed, aborted,
// committed.
type txnBatches struct {
	committed, aborted []rec
}

// franzTransactions writes three transactions with franz-go (commit, abort,
// commit) and reads them back with read_committed and read_uncommitted.
func franzTransactions(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", 3)
	b := franzTxnBatches(t, e.kgoClient(t, kgo.TransactionalID(name(c, "txn")), kgo.TransactionTimeout(30*time.Second)), topic, 300)
	checkReadCommitted(t, "franz-go read_committed", franzReadAll(t, e, topic, len(b.committed), kgo.FetchIsolationLevel(kgo.ReadCommitted())), b)
	e.checkTxnWritten(t, topic, b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// EndTxn returns once the coordinator has written PrepareCommit; it
	// writes the markers and CompleteCommit after that (KIP-890's
	// transaction.version 2 included), so PrepareCommit is waited out.
	for {
		dt, err := e.admin(t).DescribeTransactions(ctx, name(c, "txn"))
		if err != nil {
			t.Fatalf("describe transactions: %v", err)
		}
		switch d := dt[name(c, "txn")]; {
		case d.State == "CompleteCommit":
		case !e.real && d.State == "Empty":
			c.note("a finished transaction is described as Empty (Kafka: CompleteCommit)")
		case d.State == "PrepareCommit" && ctx.Err() == nil:
			time.Sleep(100 * time.Millisecond)
			continue
		default:
			t.Errorf("transaction state %q, want CompleteCommit", d.State)
		}
		return
	}
}

// franzTxnBatches produces three transactions of m records each through
// the transactional client cl: commit, abort, commit.
func franzTxnBatches(t *testing.T, cl *kgo.Client, topic string, m int) txnBatches {
	t.Helper()
	var b txnBatches
	for i, commit := range []bool{true, false, true} {
		prefix := "commit"
		if !commit {
			prefix = "abort"
		}
		rs := makeRecsFrom(prefix, i*m, m)
		if err := cl.BeginTransaction(); err != nil {
			t.Fatalf("begin transaction: %v", err)
		}
		franzProduceNoWait(t, cl, topic, rs)
		endTxn(t, cl, commit)
		if commit {
			b.committed = append(b.committed, rs...)
		} else {
			b.aborted = append(b.aborted, rs...)
		}
	}
	return b
}

// franzReadAll reads topic from the start, without a group, until it has
// n records.
func franzReadAll(t *testing.T, e *env, topic string, n int, opts ...kgo.Opt) []got {
	t.Helper()
	cl := e.kgoClient(t, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500 * time.Millisecond)}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return pollN(t, ctx, cl, n)
}

// checkReadCommitted fails unless gs holds exactly the committed records,
// in order, and nothing aborted.
func checkReadCommitted(t *testing.T, what string, gs []got, b txnBatches) {
	t.Helper()
	aborted := map[string]bool{}
	for _, r := range b.aborted {
		aborted[r.value] = true
	}
	n := 0
	for _, g := range gs {
		if aborted[g.value] {
			if n++; n <= 3 {
				t.Errorf("%s: saw aborted record %s=%s at %d/%d", what, g.key, g.value, g.partition, g.offset)
			}
		}
	}
	if n > 0 {
		t.Errorf("%s: %d aborted records visible", what, n)
		return
	}
	checkRecords(t, what, gs, b.committed)
}

// checkTxnWritten: a read_uncommitted reader sees the aborted records too,
// so the abort was real and the read_committed check not vacuous.
func (e *env) checkTxnWritten(t *testing.T, topic string, b txnBatches) {
	t.Helper()
	gs := franzReadAll(t, e, topic, len(b.committed)+len(b.aborted), kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	checkRecords(t, "read_uncommitted", gs, slices.Concat(b.committed, b.aborted))
}

// franzAddresses: every address franz-go is told, in every response, is
// kproxy's, also while partition leaders move under a running producer
// (which is when KIP-951 leader hints appear in Produce responses).
func franzAddresses(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	s := testkit.NewSniffer()
	prod := e.kgoClient(t, kgo.Dialer(s.Dial), kgo.ProducerLinger(5*time.Millisecond))

	var (
		mu       sync.Mutex
		produced []rec
		n        atomic.Int64
		stop     = make(chan struct{})
		done     = make(chan error, 1)
	)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			rs := makeRecsFrom("move", i*20, 20)
			krs := make([]*kgo.Record, len(rs))
			for j, r := range rs {
				krs[j] = &kgo.Record{Topic: topic, Key: []byte(r.key), Value: []byte(r.value)}
			}
			if err := prod.ProduceSync(ctx, krs...).FirstErr(); err != nil {
				done <- err
				return
			}
			mu.Lock()
			produced = append(produced, rs...)
			mu.Unlock()
			n.Add(int64(len(rs)))
			time.Sleep(20 * time.Millisecond)
		}
	}()
	waitCount := func(target int64) {
		for deadline := time.Now().Add(60 * time.Second); n.Load() < target; {
			if time.Now().After(deadline) {
				t.Fatalf("producer stuck at %d records", n.Load())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitCount(200)
	moved := e.moveLeaders(t, topic)
	c.note("moved the leaders of %d partitions while producing", moved)
	waitCount(n.Load() + 600)
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("produce across the leader move: %v", err)
	}
	mu.Lock()
	want := produced
	mu.Unlock()

	// The group consumer is sniffed too: FindCoordinator, and Fetch
	// responses (whose KIP-951 hints appear when a fetch hits an old leader).
	gs := franzConsumeGroup(t, []string{e.bootstrap()}, name(c, "g"), topic, len(want), kgo.Dialer(s.Dial))
	checkRecords(t, "records produced across the leader move", gs, want)
	s.CheckAddrs(t, e.plain, e.upstream)
	hints := map[string]int{}
	for _, a := range s.Addrs() {
		if a.APIKey == wire.ProduceKey || a.APIKey == wire.FetchKey {
			hints[fmt.Sprintf("%s v%d", protocol.APIName(a.APIKey), a.Version)]++
		}
	}
	if len(hints) == 0 {
		c.note("KIP-951 leader hints: none observed")
	} else {
		var hs []string
		for k, v := range hints {
			hs = append(hs, fmt.Sprintf("%s ×%d", k, v))
		}
		slices.Sort(hs)
		c.note("KIP-951 leader hints observed (all rewritten): %s", strings.Join(hs, ", "))
	}
	c.note("sniffer: %s", s.Summary())
}

// moveLeaders moves the leader of every partition of topic to another
// node and returns how many moved: kfake moves it directly; on a real
// cluster the replica list is rotated and the preferred leader elected.
func (e *env) moveLeaders(t *testing.T, topic string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := e.admin(t)
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	td := md.Topics[topic]
	moved := 0
	if !e.real {
		for _, p := range td.Partitions {
			next := e.nodes[(slices.Index(e.nodes, p.Leader)+1)%len(e.nodes)]
			if err := e.cluster.MoveTopicPartition(topic, p.Partition, next); err != nil {
				t.Fatalf("kfake move %s/%d to %d: %v", topic, p.Partition, next, err)
			}
			moved++
		}
		return moved
	}
	var req kadm.AlterPartitionAssignmentsReq
	set := kadm.TopicsSet{}
	for _, p := range td.Partitions {
		set.Add(topic, p.Partition)
		if len(p.Replicas) < 2 {
			t.Fatalf("%s/%d has replicas %v: cannot move its leader", topic, p.Partition, p.Replicas)
		}
		i := slices.Index(p.Replicas, p.Leader)
		rot := append(slices.Clone(p.Replicas[i+1:]), p.Replicas[:i+1]...)
		req.Assign(topic, p.Partition, rot)
	}
	ar, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatalf("alter partition assignments: %v", err)
	}
	if err := ar.Error(); err != nil {
		t.Fatalf("alter partition assignments: %v", err)
	}
	for {
		er, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
		if err != nil {
			t.Fatalf("elect leaders: %v", err)
		}
		pending := 0
		for _, ps := range er {
			for _, r := range ps {
				if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
					pending++
				} else {
					moved++
				}
			}
		}
		if pending == 0 {
			break
		}
		moved = 0
		if ctx.Err() != nil {
			t.Fatalf("leaders not elected: %v", er)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return moved
}

// franzTLSSCRAM: TLS and SCRAM-SHA-512 to kproxy; produce and consume with
// a group.
func franzTLSSCRAM(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	opts := []kgo.Opt{kgo.DialTLSConfig(clientTLS(t, e)), kgo.SASL(scramMechanism(true))}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.seed(e.tlsProxy(c)))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := makeRecs("tls", goRecords)
	franzProduce(t, cl, topic, want)
	group := name(c, "g")
	gs := franzConsumeGroup(t, []string{e.seed(e.tlsProxy(c))}, group, topic, len(want), opts...)
	checkRecords(t, "franz-go over TLS + SCRAM-SHA-512", gs, want)
	e.checkCommitted(t, group, topic, int64(len(want)))

	// And a wrong password is refused.
	bad, err := kgo.NewClient(kgo.SeedBrokers(e.seed(e.tlsProxy(c))), kgo.DialTLSConfig(clientTLS(t, e)),
		kgo.SASL(scramAuth("not-the-password").AsSha512Mechanism()), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, bad); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("wrong password: got %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

// franzProduceNoWait produces rs inside the open transaction of cl and
// flushes.
func franzProduceNoWait(t *testing.T, cl *kgo.Client, topic string, rs []rec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, r := range rs {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(r.key), Value: []byte(r.value)}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("transactional produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

// endTxn commits or aborts cl's transaction.
func endTxn(t *testing.T, cl *kgo.Client, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// franzDrain reads topic from the start (read_uncommitted, no group) until
// a second passes without a record, and returns every record.
func franzDrain(t *testing.T, e *env, topic string) []got {
	t.Helper()
	cl := e.kgoClient(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	var gs []got
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			gs = append(gs, got{r.Partition, r.Offset, string(r.Key), string(r.Value)})
			n++
		})
		if n == 0 && len(gs) > 0 {
			break
		}
	}
	return gs
}
