package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
)

// producedRequest returns the Produce request a franz-go producer sends
// for records (one request: they are produced together), as the filter
// would see it.
func producedRequest(t *testing.T, records ...*kgo.Record) *kmsg.ProduceRequest {
	t.Helper()
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(2, topic))
	got := make(chan *kmsg.ProduceRequest, 1)
	cluster.ControlKey(0, func(req kmsg.Request) (kmsg.Response, error, bool) {
		got <- req.(*kmsg.ProduceRequest)
		return nil, nil, false // and let kfake answer it
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return <-got
}

func partitionsOf(topics []kmsg.ProduceRequestTopic) (ps []int32) {
	for _, t := range topics {
		for _, p := range t.Partitions {
			ps = append(ps, p.Partition)
		}
	}
	return ps
}

// TestRemoveRefusedAnswersAsABroker: a partition with a record lacking
// the header leaves the request and gets INVALID_RECORD, each such
// record named by its offset in the batch; the rest stays.
func TestRemoveRefusedAnswersAsABroker(t *testing.T) {
	req := producedRequest(t, record(0, "a", true), record(1, "b", true), record(1, "c", false), record(1, "d", false))
	sent := req.Topics[0] // by name, or by id from Produce v13 on
	refused := removeRefused(req, "trace-id")
	if ps := partitionsOf(req.Topics); len(ps) != 1 || ps[0] != 0 {
		t.Fatalf("partitions left in the request: %v, want [0]", ps)
	}
	if len(refused) != 1 || refused[0].Topic != sent.Topic || refused[0].TopicID != sent.TopicID || len(refused[0].Partitions) != 1 {
		t.Fatalf("refused %+v", refused)
	}
	p := refused[0].Partitions[0]
	if p.Partition != 1 || p.ErrorCode != kerr.InvalidRecord.Code || p.BaseOffset != -1 || p.ErrorMessage == nil ||
		!strings.Contains(*p.ErrorMessage, `2 of 3 records lack header "trace-id"`) {
		t.Errorf("answer for partition 1: %+v", p)
	}
	if len(p.ErrorRecords) != 2 || p.ErrorRecords[0].RelativeOffset != 1 || p.ErrorRecords[1].RelativeOffset != 2 ||
		!strings.Contains(*p.ErrorRecords[0].ErrorMessage, `lacks header "trace-id"`) {
		t.Errorf("error records %+v", p.ErrorRecords)
	}
}

// TestRefusedRecordsUnreadable: records that do not decode (a bad
// checksum here) are answered CORRUPT_MESSAGE, as a broker does.
func TestRefusedRecordsUnreadable(t *testing.T) {
	req := producedRequest(t, record(0, "a", true))
	recs := req.Topics[0].Partitions[0].Records
	recs[len(recs)-1] ^= 0xff
	refused := removeRefused(req, "trace-id")
	if len(req.Topics) != 0 || len(refused) != 1 || refused[0].Partitions[0].ErrorCode != kerr.CorruptMessage.Code {
		t.Errorf("left %v, refused %+v", partitionsOf(req.Topics), refused)
	}
}

// TestVerdicts: all refused is answered by the filter at the request's
// version; some refused forwards the rest and merges the refusals into
// the upstream's answer; acks=0 has no answer to carry them, so the
// connection closes.
func TestVerdicts(t *testing.T) {
	f := RequireHeader{Header: "trace-id"}
	conn := &filter.Conn{}

	allRefused := producedRequest(t, record(0, "a", false))
	v := f.produce(conn, allRefused)
	resp, ok := v.Respond.(*kmsg.ProduceResponse)
	if !ok || resp.Version != allRefused.Version || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRecord.Code {
		t.Errorf("all refused: %+v", v)
	}

	mixed := producedRequest(t, record(0, "a", true), record(1, "b", false))
	v = f.produce(conn, mixed)
	if !v.Modified || v.OnResponse == nil || v.Respond != nil || v.Close != nil {
		t.Fatalf("mixed: %+v", v)
	}
	upstream := mixed.ResponseKind().(*kmsg.ProduceResponse)
	upstream.Topics = []kmsg.ProduceResponseTopic{{Topic: mixed.Topics[0].Topic, TopicID: mixed.Topics[0].TopicID, Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 0, BaseOffset: 7}}}}
	if err := v.OnResponse(upstream); err != nil {
		t.Fatal(err)
	}
	if ps := upstream.Topics[0].Partitions; len(upstream.Topics) != 1 || len(ps) != 2 || ps[0].ErrorCode != 0 || ps[1].Partition != 1 || ps[1].ErrorCode != kerr.InvalidRecord.Code {
		t.Errorf("merged answer %+v", upstream.Topics)
	}

	noAcks := producedRequest(t, record(0, "a", false))
	noAcks.Acks = 0
	if v := f.produce(conn, noAcks); v.Close == nil {
		t.Errorf("acks=0: %+v, want the connection closed", v)
	}

	traced := producedRequest(t, record(0, "a", true))
	if v := f.produce(conn, traced); v.Close != nil || v.Respond != nil || v.Modified || len(traced.Topics) != 1 {
		t.Errorf("all traced: %+v", v)
	}
}
