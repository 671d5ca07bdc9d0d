package largemessage

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// waitObjects waits until store holds n objects (deletions run in the
// background).
func waitObjects(t *testing.T, store *memStore, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for store.count() != n {
		if time.Now().After(deadline) {
			t.Fatalf("store holds %d objects, want %d", store.count(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A partition whose second value cannot be uploaded is refused with
// REQUEST_TIMED_OUT, nothing of it is forwarded, and its first value's
// object is deleted as an orphan.
func TestUploadFailureRefusesAndCleansUp(t *testing.T) {
	store := &memStore{putsOK: 1}
	f := newTestFilter(t, store, 10)
	big := bytes.Repeat([]byte("v"), 100)
	req := produceRequest("media.x", batch(0, 0, 7, testRecord{value: big}, testRecord{value: big}))
	v := f.produce(&filter.Conn{}, req)
	resp, ok := v.Respond.(*kmsg.ProduceResponse)
	if !ok {
		t.Fatalf("verdict %+v, want kproxy's own answer", v)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.RequestTimedOut.Code {
		t.Fatalf("partition error %d, want REQUEST_TIMED_OUT", code)
	}
	waitObjects(t, store, 0)
}

// The objects of a partition the cluster refuses are deleted; those of
// one it accepts stay.
func TestClusterRefusalDeletesObjects(t *testing.T) {
	store := &memStore{putsOK: -1}
	f := newTestFilter(t, store, 10)
	big := bytes.Repeat([]byte("v"), 100)
	req := produceRequest("media.x", batch(0, 0, 7, testRecord{value: big}))
	p1 := kmsg.NewProduceRequestTopicPartition()
	p1.Partition, p1.Records = 1, batch(0, 0, 7, testRecord{value: big})
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, p1)
	v := f.produce(&filter.Conn{}, req)
	if v.OnResponse == nil || store.count() != 2 {
		t.Fatalf("verdict %+v with %d objects, want a response hook and 2 objects", v, store.count())
	}
	resp := kmsg.NewPtrProduceResponse()
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = "media.x"
	for i, code := range []int16{0, kerr.NotLeaderForPartition.Code} {
		rp := kmsg.NewProduceResponseTopicPartition()
		rp.Partition, rp.ErrorCode = int32(i), code
		rt.Partitions = append(rt.Partitions, rp)
	}
	resp.Topics = append(resp.Topics, rt)
	if err := v.OnResponse(resp); err != nil {
		t.Fatal(err)
	}
	waitObjects(t, store, 1)
}

// An aborted transaction's objects are deleted when its EndTxn passes;
// a committed one's stay.
func TestAbortedTransactionDeletesObjects(t *testing.T) {
	store := &memStore{putsOK: -1}
	f := newTestFilter(t, store, 10)
	big := bytes.Repeat([]byte("v"), 100)
	for _, pid := range []int64{1, 2} {
		req := produceRequest("media.x", batch(0, transactionalFlag, pid, testRecord{value: big}))
		v := f.produce(&filter.Conn{}, req)
		resp := kmsg.NewPtrProduceResponse()
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = "media.x"
		rt.Partitions = append(rt.Partitions, kmsg.NewProduceResponseTopicPartition())
		resp.Topics = append(resp.Topics, rt)
		if err := v.OnResponse(resp); err != nil {
			t.Fatal(err)
		}
	}
	for pid, commit := range map[int64]bool{1: true, 2: false} {
		end := kmsg.NewPtrEndTxnRequest()
		end.ProducerID, end.Commit = pid, commit
		if err := f.endTxn(&filter.Conn{}, end).OnResponse(kmsg.NewPtrEndTxnResponse()); err != nil {
			t.Fatal(err)
		}
	}
	waitObjects(t, store, 1)
}
