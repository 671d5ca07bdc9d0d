package engine

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/protocol"
)

// TestEncodedSizeHintHoldsAGrownProduce: a Produce request whose records
// a filter grew (encryption adds a tag and a header to each record)
// re-encodes within encodedSizeHint, for the classic and the flexible
// versions: the buffer it is encoded into never grows by appends, and the
// memory budget is charged what the frame takes.
func TestEncodedSizeHintHoldsAGrownProduce(t *testing.T) {
	for _, version := range []int16{3, 9, 12} {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(version)
		for _, topic := range []string{"orders", "payments"} {
			req.Topics = append(req.Topics, kmsg.ProduceRequestTopic{Topic: topic,
				Partitions: []kmsg.ProduceRequestTopicPartition{{Records: bytes.Repeat([]byte("r"), 200)}}})
		}
		h := protocol.RequestHeader{APIKey: req.Key(), APIVersion: version, ClientID: "c", Flexible: protocol.IsFlexible(req.Key(), version)}
		frame := protocol.AppendRequestFrame(nil, h, req)
		records, _ := producedRecords(req)
		w := &wholeRequest{frameLen: len(frame), req: req, records: records}
		for i := range req.Topics {
			p := &req.Topics[i].Partitions[0]
			p.Records = append(bytes.Clone(p.Records), make([]byte, 300<<10)...) // 3-byte lengths now
		}
		encoded := protocol.AppendRequestFrame(nil, h, req)
		hint := encodedSizeHint(w)
		if len(encoded) > hint || hint-len(encoded) > 64 {
			t.Errorf("v%d: encoded %d bytes, hint %d: want the hint at least as large, and close", version, len(encoded), hint)
		}
	}
}

// TestFreshRecordsCountsOnlyCopies: records decoded from a frame alias it
// and are charged with it; records a filter replaced with a copy of its
// own are what freshRecords counts, in requests and responses.
func TestFreshRecordsCountsOnlyCopies(t *testing.T) {
	frame := bytes.Repeat([]byte("f"), 1000)
	req := kmsg.NewPtrProduceRequest()
	req.Topics = []kmsg.ProduceRequestTopic{{Partitions: []kmsg.ProduceRequestTopicPartition{{Records: frame[100:400]}, {Records: frame[500:900]}}}}
	if n := freshRecords(req, frame); n != 0 {
		t.Errorf("records aliasing the frame: %d fresh bytes, want 0", n)
	}
	req.Topics[0].Partitions[1].Records = make([]byte, 700)
	if n := freshRecords(req, frame); n != 700 {
		t.Errorf("one partition's records copied: %d fresh bytes, want 700", n)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Topics = []kmsg.FetchResponseTopic{{Partitions: []kmsg.FetchResponseTopicPartition{{RecordBatches: frame[10:20]}, {RecordBatches: make([]byte, 30)}}}}
	if n := freshRecords(resp, frame); n != 30 {
		t.Errorf("fetch response with one partition copied: %d fresh bytes, want 30", n)
	}
}
