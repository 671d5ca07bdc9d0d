package largemessage

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// A ShareFetch response's pointers are all resolved, however little the
// member asked for (the broker handed it every record), and a value
// above streamAbove is streamed through the Splicer, not held.
func TestShareFetchResolvesEveryRecordAndStreamsLargeOnes(t *testing.T) {
	store := &memStore{putsOK: -1}
	f := newTestFilter(t, store, 10)
	id := [16]byte{1, 2, 3}
	meta := kmsg.NewPtrMetadataResponse()
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic, mt.TopicID = kmsg.StringPtr("media.x"), id
	meta.Topics = append(meta.Topics, mt)
	if err := f.names.Learn(meta); err != nil {
		t.Fatal(err)
	}
	values := [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), streamAbove+1), bytes.Repeat([]byte("c"), 1000)}
	var all []byte
	for i, v := range values {
		req := produceRequest("media.x", batch(int64(i), 0, 7, testRecord{value: v}))
		f.produce(&filter.Conn{}, req)
		all = append(all, req.Topics[0].Partitions[0].Records...)
	}
	resp := kmsg.NewPtrShareFetchResponse()
	rt := kmsg.NewShareFetchResponseTopic()
	rt.TopicID = id
	rp := kmsg.NewShareFetchResponseTopicPartition()
	rp.Records = all
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	var s filter.Splicer
	f.shareFetch(resp, nil, &s)
	got := resp.Topics[0].Partitions[0]
	if got.ErrorCode != 0 {
		t.Fatalf("partition error %d", got.ErrorCode)
	}
	splices := s.Splices()
	if len(splices) != 1 || splices[0].Size != int64(len(values[1])) || !bytes.Contains(got.Records, splices[0].Placeholder[:]) {
		t.Fatalf("%d values spliced, want the %d-byte one, its placeholder in the records", len(splices), len(values[1]))
	}
	for _, v := range [][]byte{values[0], values[2]} {
		if !bytes.Contains(got.Records, v) {
			t.Errorf("the %c value is not resolved in the records", v[0])
		}
	}
	if bytes.Contains(got.Records, values[1][:streamAbove/2]) {
		t.Error("the large value is held in the records")
	}
}
