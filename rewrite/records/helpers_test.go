package records_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/rewrite/records"
)

const topic = "payments"

// testRecords are what the producers of these tests write: keys, headers
// (one with a null value) and a tombstone.
func testRecords(n int) []*kgo.Record {
	var rs []*kgo.Record
	for i := range n {
		r := &kgo.Record{Topic: topic, Key: []byte{'k', byte('0' + i%10)}, Value: []byte("value-" + string(rune('a'+i%26)) + "-0123456789")}
		r.Headers = []kgo.RecordHeader{{Key: "trace-id", Value: []byte{'t', byte(i)}}, {Key: "empty"}}
		if i == n-1 {
			r.Value = nil // a tombstone
		}
		rs = append(rs, r)
	}
	return rs
}

// storedBatches has a franz-go producer with opts write rs to a fresh
// one-broker kfake (committing them in a transaction when transactional),
// and returns the raw record batches a Fetch of the partition returns,
// control batches included.
func storedBatches(t *testing.T, transactional bool, rs []*kgo.Record, opts ...kgo.Opt) []byte {
	t.Helper()
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, topic))
	opts = append(opts, kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ProducerLinger(20*time.Millisecond))
	if transactional {
		opts = append(opts, kgo.TransactionalID("records-test"))
	}
	cl := testkit.Client(t, opts...)
	ctx := testkit.Context(t, 20*time.Second)
	if transactional {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	// Two produce calls: at least two data batches.
	half := len(rs) / 2
	for _, part := range [][]*kgo.Record{rs[:half], rs[half:]} {
		if err := cl.ProduceSync(ctx, part...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if transactional {
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	return fetchRaw(t, ctx, cl)
}

// fetchRaw returns the record batches of partition 0 of topic, as a
// Fetch response carries them.
func fetchRaw(t *testing.T, ctx context.Context, cl *kgo.Client) []byte {
	t.Helper()
	meta := kmsg.NewPtrMetadataRequest()
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(topic)}}
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	req := testkit.FetchByID(13, mresp.Topics[0].TopicID) // the client sends its highest version
	req.IsolationLevel = 0                                // read uncommitted: everything stored
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch: error %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
	}
	return p.RecordBatches
}

// decoded is what a franz-go consumer makes of raw record batches; it
// fails the test on a batch that does not decode (a bad CRC, length or
// compression included).
func decoded(t *testing.T, raw []byte) []*kgo.Record {
	t.Helper()
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: topic, KeepControlRecords: true},
		&kmsg.FetchResponseTopicPartition{RecordBatches: raw, HighWatermark: 1 << 40}, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		t.Fatalf("franz-go cannot decode the records: %v", fp.Err)
	}
	return fp.Records
}

// batchHeaders reads the headers of the v2 batches in raw with kmsg.
func batchHeaders(t *testing.T, raw []byte) []kmsg.RecordBatch {
	t.Helper()
	var hs []kmsg.RecordBatch
	for len(raw) > 0 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			t.Fatalf("kmsg cannot read a batch: %v", err)
		}
		raw = raw[12+b.Length:]
		b.Records = nil
		hs = append(hs, b)
	}
	return hs
}

// reverseValues is a Func that reverses each value (a tombstone stays
// null), in one buffer reused from record to record.
func reverseValues() records.Func {
	var buf []byte
	return func(_ *records.Batch, r *records.Record) error {
		if r.Value == nil {
			return nil
		}
		buf = append(buf[:0], r.Value...)
		slices.Reverse(buf)
		r.Value = buf
		return nil
	}
}

func reversed(b []byte) []byte {
	if b == nil {
		return nil
	}
	b = slices.Clone(b)
	slices.Reverse(b)
	return b
}
