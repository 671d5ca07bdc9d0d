package largemessage

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/largemessage/pointer"
)

// decode is what a franz-go consumer makes of record batches; it fails
// the test on batches it cannot read.
func decode(t *testing.T, raw []byte) []*kgo.Record {
	t.Helper()
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: "media.x"},
		&kmsg.FetchResponseTopicPartition{RecordBatches: raw, HighWatermark: 1 << 40}, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		t.Fatalf("franz-go cannot decode the records: %v", fp.Err)
	}
	return fp.Records
}

func produceRequest(topic string, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks = 9, -1
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = records
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// Produce offloads the value over the threshold and the one with the
// trigger header, removes the trigger, keeps the other headers and
// records; fetch puts the values back, byte for byte.
func TestOffloadAndResolve(t *testing.T) {
	store := &memStore{putsOK: -1}
	f := newTestFilter(t, store, 10)
	big := bytes.Repeat([]byte("b"), 100)
	in := batch(0, 0, 7,
		testRecord{key: []byte("small"), value: []byte("tiny")},
		testRecord{key: []byte("big"), value: big, headers: [][2]string{{"traceparent", "tp"}}},
		testRecord{key: []byte("marked"), value: []byte("short"), headers: [][2]string{{"LFS_BLOB", ""}, {"x", "y"}}},
		testRecord{key: []byte("tombstone")})
	req := produceRequest("media.x", in)
	v := f.produce(&filter.Conn{}, req)
	if v.Respond != nil || v.Close != nil || !v.Modified {
		t.Fatalf("verdict %+v, want the request modified and forwarded", v)
	}
	stored := decode(t, req.Topics[0].Partitions[0].Records)
	if len(stored) != 4 || string(stored[0].Value) != "tiny" || stored[3].Value != nil {
		t.Fatalf("forwarded %d records; small %q, tombstone %v", len(stored), stored[0].Value, stored[3].Value)
	}
	for _, i := range []int{1, 2} {
		p, err := pointer.Decode(stored[i].Value)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !strings.HasPrefix(p.Key, "default/media.x/lfs/") || p.Bucket != "unit" {
			t.Errorf("record %d: object s3://%s/%s", i, p.Bucket, p.Key)
		}
	}
	if h := stored[2].Headers; len(h) != 1 || h[0].Key != "x" {
		t.Errorf("marked record forwarded with headers %v, want only x (the trigger removed)", h)
	}
	if len(store.objects) != 2 {
		t.Fatalf("store holds %d objects, want 2", len(store.objects))
	}
	resp := fetchResponse("media.x", req.Topics[0].Partitions[0].Records)
	f.fetch(resp, fetchLimits{total: 1 << 30}, nil, nil)
	got := decode(t, resp.Topics[0].Partitions[0].RecordBatches)
	if resp.Topics[0].Partitions[0].ErrorCode != 0 || len(got) != 4 || !bytes.Equal(got[1].Value, big) || string(got[2].Value) != "short" || string(got[0].Value) != "tiny" {
		t.Fatalf("resolved: error %d, %d records", resp.Topics[0].Partitions[0].ErrorCode, len(got))
	}
	if h := got[1].Headers; len(h) != 1 || h[0].Key != "traceparent" || string(h[0].Value) != "tp" {
		t.Errorf("resolved headers %v, want traceparent: tp", h)
	}
}

func fetchResponse(topic string, batches []byte) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	t := kmsg.NewFetchResponseTopic()
	t.Topic = topic
	p := kmsg.NewFetchResponseTopicPartition()
	p.RecordBatches, p.HighWatermark = batches, 1<<40
	t.Partitions = append(t.Partitions, p)
	resp.Topics = append(resp.Topics, t)
	return resp
}

// A response holds what the client's max bytes allow, counting resolved
// values: the first batch whatever its size, then only batches that fit.
func TestFetchKeepsToMaxBytes(t *testing.T) {
	store := &memStore{putsOK: -1}
	f := newTestFilter(t, store, 10)
	var all []byte
	for i := range 3 {
		req := produceRequest("media.x", batch(int64(i), 0, 7, testRecord{value: bytes.Repeat([]byte{byte('a' + i)}, 1000)}))
		f.produce(&filter.Conn{}, req)
		all = append(all, req.Topics[0].Partitions[0].Records...)
	}
	resp := fetchResponse("media.x", all)
	f.fetch(resp, fetchLimits{total: 1500}, nil, nil)
	got := decode(t, resp.Topics[0].Partitions[0].RecordBatches)
	if len(got) != 1 || got[0].Value[0] != 'a' || len(got[0].Value) != 1000 {
		t.Fatalf("got %d records, want only the first, resolved", len(got))
	}
	resp = fetchResponse("media.x", all)
	f.fetch(resp, fetchLimits{total: 100}, nil, nil)
	if got := decode(t, resp.Topics[0].Partitions[0].RecordBatches); len(got) != 1 {
		t.Fatalf("with a limit under the first value: %d records, want the first all the same", len(got))
	}
}

// Batches of aborted transactions are left as they are in a
// read_committed fetch, up to their abort marker; other producers' and
// later transactions' batches are resolved.
func TestAbortedBatches(t *testing.T) {
	const txn, ctl = transactionalFlag, transactionalFlag | controlFlag
	a := newAbortedBatches([]kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 5, FirstOffset: 10}})
	for _, c := range []struct {
		offset int64
		attrs  int16
		pid    int64
		skip   bool
	}{
		{0, txn, 5, false},  // before the aborted transaction began
		{10, txn, 5, true},  // inside it
		{11, txn, 6, false}, // another producer
		{12, 0, 5, false},   // not transactional
		{13, txn, 5, true},  // still inside
		{14, ctl, 5, false}, // its abort marker
		{15, txn, 5, false}, // the next transaction
	} {
		if got := a.skip(batch(c.offset, c.attrs, c.pid, testRecord{value: []byte("v")})); got != c.skip {
			t.Errorf("batch at %d (attrs %#x, pid %d): skip %v, want %v", c.offset, c.attrs, c.pid, got, c.skip)
		}
	}
}

func TestOwnKey(t *testing.T) {
	f := &Filter{namespace: "teama"}
	for key, want := range map[string]bool{
		"teama/media.x/lfs/2026/02/01/obj-1": true,
		"teama/a..b/lfs/2026/02/01/obj-1":    true, // a topic name with two dots
		"teamb/media.x/lfs/2026/02/01/obj-1": false,
		"teamab/media.x/obj":                 false,
		"teama/../teamb/media.x/obj":         false,
		"teama/./x":                          false,
		"teama//x":                           false,
		"teama":                              false,
	} {
		if got := f.ownKey(key); got != want {
			t.Errorf("ownKey(%q) = %v, want %v", key, got, want)
		}
	}
}
