package encryption

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestManySmallPartitionsStayWithinTheBudget: a client produces one small
// record to each of thousands of partitions in one request, again and
// again, then fetches them all in one response. kproxy holds about what
// the messages weigh, within limits.max_buffered_bytes plus a constant:
// the buffers records are sealed and opened into are not 64 KiB per
// partition (which made each 300 KiB request hold 125 MiB).
func TestManySmallPartitionsStayWithinTheBudget(t *testing.T) {
	const (
		partitions  = 2000
		rounds      = 5
		budget      = 16 << 20
		rssOverhead = 64 << 20
	)
	e := newEnvPartitions(t, partitions, []string{"orders"}, encryption("alias/kek")+fmt.Sprintf("limits: {max_frame_bytes: %d, max_buffered_bytes: %d}\n", budget/2, budget))
	before := e.kp.PeakRSS()
	c := testkit.DialRaw(t, e.kp.Bootstrap, "small-partitions")

	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks, produce.TimeoutMillis = 9, 1, 10000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "orders"
	for p := range int32(partitions) {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition, pp.Records = p, testkit.RecordBatch(fmt.Sprintf("value-of-partition-%d", p))
		pt.Partitions = append(pt.Partitions, pp)
	}
	produce.Topics = []kmsg.ProduceRequestTopic{pt}
	for round := range rounds {
		resp := c.MustRoundTrip(t, produce).(*kmsg.ProduceResponse)
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("round %d: partition %d: error code %d", round, p.Partition, p.ErrorCode)
			}
		}
	}

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.ReplicaID, fetch.MaxWaitMillis, fetch.MaxBytes = 12, -1, 1000, 64<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "orders"
	for p := range int32(partitions) {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = p, 1<<20
		ft.Partitions = append(ft.Partitions, fp)
	}
	fetch.Topics = []kmsg.FetchRequestTopic{ft}
	resp := c.MustRoundTrip(t, fetch).(*kmsg.FetchResponse)
	for _, p := range resp.Topics[0].Partitions {
		want := []byte(fmt.Sprintf("value-of-partition-%d", p.Partition))
		if p.ErrorCode != 0 || bytes.Count(p.RecordBatches, want) != rounds {
			t.Fatalf("fetched partition %d: error code %d, %d of its %d values decrypted", p.Partition, p.ErrorCode, bytes.Count(p.RecordBatches, want), rounds)
		}
	}

	peak := e.kp.PeakRSS()
	t.Logf("%d partitions of one small record, %d produce rounds and one fetch: kproxy peak RSS %d MiB (%d MiB before)", partitions, rounds, peak>>20, before>>20)
	if limit := int64(budget + rssOverhead); peak > limit {
		t.Errorf("kproxy's peak RSS %d MiB exceeds max_buffered_bytes plus %d MiB (%d MiB)", peak>>20, rssOverhead>>20, limit>>20)
	}
}
