package e2e

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// leaderConn starts an env with a one-partition topic and returns it, a
// raw connection to kproxy's listener for the topic's leader, after an
// ApiVersions exchange, the versions to use and the Produce version among
// them (produceVersion).
func leaderConn(t *testing.T, topic string) (e *env, c *rawConn, versions map[int16]int16, produce int16) {
	t.Helper()
	e = newEnv(t, "")
	ctx := testkit.Context(t, 30*time.Second)
	e.createTopic(ctx, topic, 1)
	leader := e.cluster.LeaderFor(topic, 0)
	addr, ok := e.proxy.BrokerAddr(leader)
	if !ok {
		t.Fatalf("no kproxy listener for leader %d", leader)
	}
	c = dialRaw(t, addr)
	versions = c.Versions(t)
	return e, c, versions, produceVersion(t, versions)
}

// produceVersion is the highest negotiated Produce version that still names
// topics (v13 names them by id).
func produceVersion(t *testing.T, v map[int16]int16) int16 {
	pv, ok := v[int16(kmsg.Produce)]
	if !ok || pv < 3 {
		t.Fatalf("Produce v%d negotiated", pv)
	}
	return min(pv, 12)
}

// TestPipelinedRequests writes many requests back to back without reading,
// then checks every response comes back, in order, with the right
// correlation id and a sensible body.
func TestPipelinedRequests(t *testing.T) {
	t.Parallel()
	const (
		topic = "pipelined"
		n     = 150
	)
	e, c, v, pv := leaderConn(t, topic)

	type sent struct {
		req  kmsg.Request
		corr int32
	}
	var (
		wire     []byte
		requests []sent
		produced []string
	)
	for i := range n {
		var req kmsg.Request
		switch i % 3 {
		case 0:
			req = metadataRequest(v[int16(kmsg.Metadata)], topic)
		case 1:
			l := kmsg.NewPtrListOffsetsRequest()
			l.SetVersion(v[int16(kmsg.ListOffsets)])
			lt := kmsg.NewListOffsetsRequestTopic()
			lt.Topic = topic
			lp := kmsg.NewListOffsetsRequestTopicPartition()
			lp.Partition = 0
			lp.Timestamp = -1 // latest
			lt.Partitions = append(lt.Partitions, lp)
			l.Topics = append(l.Topics, lt)
			req = l
		case 2:
			val := fmt.Sprintf("pipelined-%03d", i)
			produced = append(produced, val)
			req = produceRequest(pv, 1, topic, 0, val)
		}
		f, corr := c.Frame(req)
		wire = append(wire, f...)
		requests = append(requests, sent{req, corr})
	}

	// All requests in one write: none is answered before all are sent.
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(wire); err != nil {
		t.Fatalf("write %d pipelined requests: %v", n, err)
	}
	lastProduceOffset := int64(-1)
	for i, s := range requests {
		f, err := testkit.ReadFrame(c)
		if err != nil {
			t.Fatalf("response %d of %d: %v", i, n, err)
		}
		resp := testkit.MustDecodeResponse(t, s.req, s.corr, f) // checks the correlation id
		switch r := resp.(type) {
		case *kmsg.MetadataResponse:
			if len(r.Topics) != 1 || r.Topics[0].ErrorCode != 0 || len(r.Brokers) == 0 {
				t.Errorf("response %d: bad Metadata response %+v", i, r)
			}
		case *kmsg.ListOffsetsResponse:
			if r.Topics[0].Partitions[0].ErrorCode != 0 {
				t.Errorf("response %d: ListOffsets error %d", i, r.Topics[0].Partitions[0].ErrorCode)
			}
		case *kmsg.ProduceResponse:
			p := r.Topics[0].Partitions[0]
			if p.ErrorCode != 0 {
				t.Fatalf("response %d: Produce error %d", i, p.ErrorCode)
			}
			if p.BaseOffset <= lastProduceOffset {
				t.Errorf("response %d: produce at offset %d after %d", i, p.BaseOffset, lastProduceOffset)
			}
			lastProduceOffset = p.BaseOffset
		}
	}
	expectNoMoreFrames(t, c.Conn, 200*time.Millisecond)

	ctx := testkit.Context(t, 30*time.Second)
	checkInOrder(t, e.consumeValues(ctx, topic, 0, len(produced)), produced)
}

// TestAcksZeroInterleaved mixes acks=0 and acks=1 produce requests on one
// connection: only the acks=1 ones are answered, in order, and the acks=0
// records are stored all the same.
func TestAcksZeroInterleaved(t *testing.T) {
	t.Parallel()
	const topic = "acks-zero"
	e, c, v, pv := leaderConn(t, topic)

	var (
		wire     []byte
		answered []int32 // correlation ids of acks=1 requests
		acks1    []*kmsg.ProduceRequest
		all      []string
	)
	for i := range 120 {
		acks := int16(0)
		if i%4 == 3 {
			acks = 1
		}
		val := fmt.Sprintf("acks%d-%03d", acks, i)
		all = append(all, val)
		req := produceRequest(pv, acks, topic, 0, val)
		f, corr := c.Frame(req)
		wire = append(wire, f...)
		if acks == 1 {
			answered = append(answered, corr)
			acks1 = append(acks1, req)
		}
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(wire); err != nil {
		t.Fatalf("write: %v", err)
	}
	for i, corr := range answered {
		f, err := testkit.ReadFrame(c)
		if err != nil {
			t.Fatalf("acks=1 response %d of %d: %v", i, len(answered), err)
		}
		r := testkit.MustDecodeResponse(t, acks1[i], corr, f).(*kmsg.ProduceResponse)
		if ec := r.Topics[0].Partitions[0].ErrorCode; ec != 0 {
			t.Errorf("acks=1 response %d: error %d", i, ec)
		}
	}
	expectNoMoreFrames(t, c.Conn, 300*time.Millisecond)

	// The connection still works after the acks=0 stream.
	tail := kmsg.NewPtrMetadataRequest()
	tail.SetVersion(v[int16(kmsg.Metadata)])
	c.MustRoundTrip(t, tail)

	ctx := testkit.Context(t, 30*time.Second)
	checkInOrder(t, e.consumeValues(ctx, topic, 0, len(all)), all)
}

// expectNoMoreFrames fails if c delivers any byte within d.
func expectNoMoreFrames(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Time{})
	var b [64]byte
	n, err := c.Read(b[:])
	if n > 0 {
		t.Fatalf("unexpected extra response bytes: %x", b[:n])
	}
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("connection ended after the expected responses: %v", err)
	}
}

// checkInOrder asserts got equals want exactly (same values, same order).
func checkInOrder(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("consumed %d records, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("record %d is %q, want %q (got %v)", i, got[i], want[i], got)
		}
	}
}

// TestPipelinedLargeResponses pipelines Fetch requests whose responses are
// far larger than kproxy's buffers, at a version kproxy streams untouched
// (Fetch v11, spliced between sockets) and at the latest (inspected for
// leader endpoints), between Metadata requests whose responses kproxy
// decodes and re-encodes. Every response must arrive whole, in order.
func TestPipelinedLargeResponses(t *testing.T) {
	t.Parallel()
	const topic = "pipelined-large"
	_, c, v, pv := leaderConn(t, topic)

	big := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16)
	pr := produceRequest(pv, 1, topic, 0, string(big), string(big[:len(big)/2]))
	if ec := c.MustRoundTrip(t, pr).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; ec != 0 {
		t.Fatalf("produce: error %d", ec)
	}
	md := metadataRequest(v[int16(kmsg.Metadata)], topic)
	topicID := c.MustRoundTrip(t, md).(*kmsg.MetadataResponse).Topics[0].TopicID

	fetch := func(version int16) *kmsg.FetchRequest {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(version)
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 4 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}
	var (
		wire []byte
		reqs []kmsg.Request
		ids  []int32
	)
	for i := range 60 {
		var req kmsg.Request
		switch i % 3 {
		case 0:
			req = fetch(11)
		case 1:
			req = md
		case 2:
			req = fetch(v[int16(kmsg.Fetch)])
		}
		f, corr := c.Frame(req)
		wire = append(wire, f...)
		reqs = append(reqs, req)
		ids = append(ids, corr)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	written := make(chan error, 1)
	go func() { _, err := c.Write(wire); written <- err }() // responses are read meanwhile
	var recordBytes int
	for i, req := range reqs {
		f, err := testkit.ReadFrame(c)
		if err != nil {
			t.Fatalf("response %d of %d: %v", i, len(reqs), err)
		}
		switch r := testkit.MustDecodeResponse(t, req, ids[i], f).(type) {
		case *kmsg.FetchResponse:
			p := r.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || p.HighWatermark != 2 {
				t.Fatalf("response %d (Fetch v%d): error %d, high watermark %d", i, req.GetVersion(), p.ErrorCode, p.HighWatermark)
			}
			recordBytes = len(p.RecordBatches)
			var batch kmsg.RecordBatch
			if err := batch.ReadFrom(p.RecordBatches); err != nil || batch.NumRecords != 2 {
				t.Fatalf("response %d (Fetch v%d): batch %v, %d records", i, req.GetVersion(), err, batch.NumRecords)
			}
			if !bytes.Contains(p.RecordBatches, big) {
				t.Fatalf("response %d (Fetch v%d): record bytes corrupted", i, req.GetVersion())
			}
		case *kmsg.MetadataResponse:
			if len(r.Topics) != 1 || r.Topics[0].ErrorCode != 0 {
				t.Fatalf("response %d: bad Metadata response", i)
			}
		}
	}
	if err := <-written; err != nil {
		t.Fatalf("write: %v", err)
	}
	t.Logf("%d responses in order; each fetch carried %d KiB of records", len(reqs), recordBytes>>10)
	expectNoMoreFrames(t, c.Conn, 200*time.Millisecond)
}
