package conformance

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// share-group: KIP-932 queues. A share group set to start at the earliest
// offset consumes every record of a topic; share fetches and
// acknowledgements go to partition leaders whose addresses (the
// NodeEndpoints of ShareFetch/ShareAcknowledge responses) kproxy rewrites.

func init() {
	register("franz-go", "share-group", franzShare)
	register("confluent-kafka", "share-group", confluentShare)
	register("java", "share-group", javaShare)
}

// setShareEarliest sets share.auto.offset.reset=earliest on group (a share
// group otherwise starts at the latest offset), with franz-go through
// kproxy.
func (e *env) setShareEarliest(t *testing.T, group string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name = "share.auto.offset.reset"
	cfg.Value = kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	ctx, cancel := ctxTimeout(20 * time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, e.kgoClient(t))
	if err != nil {
		t.Fatalf("set share.auto.offset.reset on %s: %v", group, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("set share.auto.offset.reset on %s: %v (%v)", group, err, r.ErrorMessage)
		}
	}
}

// checkSet fails unless gs holds every record of want and nothing else
// (share groups deliver at least once and promise no order).
func checkSet(t *testing.T, what string, gs []got, want []rec) (dups int) {
	t.Helper()
	seen := map[rec]int{}
	for _, g := range gs {
		seen[rec{g.key, g.value}]++
	}
	missing := 0
	for _, r := range want {
		switch n := seen[r]; {
		case n == 0:
			if missing++; missing <= 3 {
				t.Errorf("%s: missing %s=%s", what, r.key, r.value)
			}
		case n > 1:
			dups += n - 1
		}
		delete(seen, r)
	}
	for r := range seen {
		t.Errorf("%s: unexpected record %s=%s", what, r.key, r.value)
		break
	}
	if missing > 0 {
		t.Errorf("%s: %d of %d records missing", what, missing, len(want))
	}
	return dups
}

// franzShare: a franz-go share consumer (sniffed) reads every record and
// accepts it, while every partition leader moves; every address in its
// responses (ShareFetch/ShareAcknowledge node endpoints included) is
// kproxy's.
func franzShare(t *testing.T, c *cellCtx, e *env) {
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	e.setShareEarliest(t, group)
	want := makeRecs("share", goRecords)
	franzProduce(t, e.kgoClient(t), topic, want)
	s := testkit.NewSniffer()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.bootstrap()), kgo.Dialer(s.Dial), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var gs []got
	// Count distinct records: share groups deliver at least once, and
	// after the leaders move some come again (their acquisition locks on
	// the old leader lapse), so len(gs) can reach len(want) while records
	// are still to come.
	distinct := map[rec]bool{}
	moved := false
	for len(distinct) < len(want) {
		if !moved && len(distinct) >= len(want)/3 {
			// Move every leader mid-stream: share fetches to the old
			// leaders are answered with the new leaders' endpoints.
			moved = true
			c.note("moved the leaders of %d partitions while share-consuming", e.moveLeaders(t, topic))
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("franz-go share consumer read %d of %d records (%d deliveries): %v", len(distinct), len(want), len(gs), ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Errorf("share fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			gs = append(gs, got{r.Partition, r.Offset, string(r.Key), string(r.Value)})
			distinct[rec{string(r.Key), string(r.Value)}] = true
		})
		cl.MarkAcks(kgo.AckAccept)
		if t.Failed() {
			t.FailNow()
		}
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Errorf("flush share acks: %v", err)
	}
	if dups := checkSet(t, "franz-go share group", gs, want); dups > 0 {
		c.note("%d records delivered twice (share groups are at least once)", dups)
	}
	if s.Requests(int16(kmsg.ShareFetch)) == 0 {
		t.Errorf("franz-go sent no ShareFetch")
	}
	for _, err := range s.Errors() {
		t.Error(err)
	}
	endpoints := 0
	for _, a := range s.Addrs() {
		e.checkNodeAddr(t, e.plain, a.String(), a.NodeID, a.Addr)
		if a.APIKey == int16(kmsg.ShareFetch) || a.APIKey == int16(kmsg.ShareAcknowledge) {
			endpoints++
		}
	}
	c.note("%d ShareFetch, %d ShareAcknowledge; %d node endpoints in their responses, all kproxy's",
		s.Requests(int16(kmsg.ShareFetch)), s.Requests(int16(kmsg.ShareAcknowledge)), endpoints)
}

func confluentShare(t *testing.T, c *cellCtx, e *env) {
	requireConfluent(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	e.setShareEarliest(t, group)
	// 600, not 2,000: against kfake (directly too) librdkafka's share
	// consumer takes 30-70s for 2,000 records, against Kafka 5s.
	want := makeRecs("share", 600)
	var out confluentConsumed
	e.confluent(t, e.plain, &out, "produce", "--topic", topic, "--records", strconv.Itoa(len(want)), "--prefix", "share")
	e.confluent(t, e.plain, &out, "share", "--topic", topic, "--group", group, "--count", strconv.Itoa(len(want)), "--timeout", "120")
	if dups := checkSet(t, "confluent-kafka ShareConsumer", out.got(), want); dups > 0 {
		c.note("%d records delivered twice (share groups are at least once)", dups)
	}
	e.checkGroupType(t, group, "share")
}

// javaShare: kafka-configs sets the share group's start offset, and
// kafka-console-share-consumer reads every record a verifiable producer
// acked; kafka-share-groups describes the group.
func javaShare(t *testing.T, c *cellCtx, e *env) {
	requireJava(t, c)
	topic := e.newTopic(t, c, "t", partitions)
	group := name(c, "g")
	e.java(t, e.plain, nil, "kafka-configs", "--bootstrap-server", e.bootstrap(), "--entity-type", "groups",
		"--entity-name", group, "--alter", "--add-config", "share.auto.offset.reset=earliest")
	acked := e.javaProduce(t, e.plain, topic, 1, 2000)
	p := e.java(t, e.plain, nil, "kafka-console-share-consumer", "--bootstrap-server", e.bootstrap(), "--topic", topic,
		"--group", group, "--max-messages", "2000", "--timeout-ms", "60000",
		"--formatter-property", "print.key=true", "--formatter-property", "print.partition=true",
		"--formatter-property", "print.offset=true", "--formatter-property", "key.separator=|")
	if dups := checkSet(t, "kafka-console-share-consumer", parseConsole(t, p.stdout.String()), asRecs(acked)); dups > 0 {
		c.note("%d records delivered twice (share groups are at least once)", dups)
	}
	e.checkGroupType(t, group, "share")
	out := e.java(t, e.plain, nil, "kafka-share-groups", "--bootstrap-server", e.bootstrap(), "--describe", "--group", group).stdout.String()
	if !strings.Contains(out, group) || !strings.Contains(out, topic) {
		t.Errorf("kafka-share-groups --describe --group %s:\n%s", group, out)
	}
}
