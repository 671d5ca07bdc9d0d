package wire

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The records walks find each partition's records where kmsg encodes
// them, at every flexible version, past the fields before and between
// them (messages, leaders, acquired records, aborted transactions).
func TestAnyRecordsFindsEachPartition(t *testing.T) {
	want := [][]byte{[]byte("first partition"), []byte("second partition")}
	found := func(any func(int16, []byte, func([]byte) bool) (bool, error), version int16, body []byte) {
		t.Helper()
		var seen [][]byte
		hit, err := any(version, body, func(recs []byte) bool {
			seen = append(seen, bytes.Clone(recs))
			return bytes.Equal(recs, want[1])
		})
		if err != nil || !hit || len(seen) != 2 || !bytes.Equal(seen[0], want[0]) {
			t.Errorf("v%d: found %v (%v), saw %q", version, hit, err, seen)
		}
		if hit, err := any(version, body, func([]byte) bool { return false }); hit || err != nil {
			t.Errorf("v%d: nothing to match: found %v (%v)", version, hit, err)
		}
	}
	msg := "m"
	for v := int16(12); v <= 17; v++ {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = v
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic, tp.TopicID = "t", [16]byte{1}
		for _, recs := range want {
			p := kmsg.NewFetchResponseTopicPartition()
			p.RecordBatches = recs
			p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 1, FirstOffset: 2}}
			tp.Partitions = append(tp.Partitions, p)
		}
		resp.Topics = append(resp.Topics, tp)
		found(AnyFetchRecords, v, resp.AppendTo(nil))
	}
	for v := int16(0); v <= 1; v++ {
		resp := kmsg.NewPtrShareFetchResponse()
		resp.Version, resp.ErrorMessage = v, &msg
		tp := kmsg.NewShareFetchResponseTopic()
		tp.TopicID = [16]byte{1}
		for _, recs := range want {
			p := kmsg.NewShareFetchResponseTopicPartition()
			p.Records, p.ErrorMessage, p.AcknowledgeErrorMessage = recs, &msg, &msg
			p.AcquiredRecords = []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{{FirstOffset: 1, LastOffset: 2, DeliveryCount: 1}}
			tp.Partitions = append(tp.Partitions, p)
		}
		resp.Topics = append(resp.Topics, tp)
		resp.NodeEndpoints = []kmsg.ShareFetchResponseNodeEndpoint{{NodeID: 1, Host: "h", Port: 9092}}
		found(AnyShareFetchRecords, v, resp.AppendTo(nil))
	}
	if _, err := AnyShareFetchRecords(2, nil, func([]byte) bool { return true }); err == nil {
		t.Error("share fetch v2, unknown: no error")
	}
	if _, err := AnyFetchRecords(11, nil, func([]byte) bool { return true }); err == nil {
		t.Error("fetch v11, not flexible: no error")
	}
}
