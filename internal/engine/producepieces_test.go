package engine

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/protocol"
)

// A Produce frame written with its large fresh records spliced in is the
// very frame kmsg encodes, at every version: with and without a
// transactional id, null, small, large and in-frame records, and unknown
// tagged fields.
func TestProduceFrameSplicedIsKmsgs(t *testing.T) {
	inFrame := bytes.Repeat([]byte{'f'}, 2*minSplicedRecords)
	large := bytes.Repeat([]byte{'l'}, minSplicedRecords+300)
	txn := "txn"
	for version := int16(0); version <= min(maxSplicedProduce, (&kmsg.ProduceRequest{}).MaxVersion()); version++ {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = version, -1, 30000
		if version >= 3 {
			req.TransactionID = &txn
		}
		req.UnknownTags.Set(7, []byte("top"))
		for ti, name := range []string{"orders", "payments"} {
			topic := kmsg.ProduceRequestTopic{Topic: name, TopicID: [16]byte{byte(ti + 1)}}
			topic.UnknownTags.Set(3, []byte("t"))
			for pi, records := range [][]byte{nil, []byte("small"), large, inFrame, large[1:]} {
				p := kmsg.ProduceRequestTopicPartition{Partition: int32(pi), Records: records}
				p.UnknownTags.Set(1, []byte("p"))
				topic.Partitions = append(topic.Partitions, p)
			}
			req.Topics = append(req.Topics, topic)
		}
		h := protocol.RequestHeader{CorrelationID: 42, ClientID: "client"}
		want := protocol.AppendRequestFrame(nil, h, req)
		head, pieces := appendProduceFrame([]byte("xx"), h, req, inFrame, nil)
		var got bytes.Buffer
		if err := writeFrame(&got, head[2:], pieces); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("v%d: %d bytes, kmsg's %d", version, got.Len(), len(want))
		}
		if len(pieces) != 4 || len(head) > len(want)-4*minSplicedRecords {
			t.Errorf("v%d: %d pieces, head of %d bytes", version, len(pieces), len(head))
		}
	}
}
