package engine

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// A Fetch or ShareFetch response written with its fresh records in place
// is, byte for byte, the frame kmsg encodes, at every version: partitions
// with records read (in the frame), fresh ones large and small, null and
// empty ones, aborted transactions and tagged fields around them.
func TestRecordsInPlaceMatchTheEncoding(t *testing.T) {
	read := bytes.Repeat([]byte{'r'}, 40<<10) // stands for records in the frame read
	fresh := func(n int, fill byte) []byte { return bytes.Repeat([]byte{fill}, n) }
	check := func(t *testing.T, name string, resp kmsg.Response, want int) {
		t.Helper()
		fields := freshRecordsFields(resp, read)
		if len(fields) != want {
			t.Fatalf("%s: %d fields to write in place, want %d", name, len(fields), want)
		}
		encoded := protocol.AppendResponseFrame(nil, 77, resp)
		frame, _, pieces, err := appendSplicedResponseFrame([]byte("kept"), nil, 77, resp, fields, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(frame[:4]) != "kept" {
			t.Fatalf("%s: dst's bytes were not kept", name)
		}
		var got bytes.Buffer
		if err := writeFrame(&got, frame[4:], pieces); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), encoded) {
			t.Fatalf("%s: %d bytes written in place differ from the %d of the encoding", name, got.Len(), len(encoded))
		}
		if len(pieces) != want {
			t.Fatalf("%s: %d pieces, want %d", name, len(pieces), want)
		}
	}
	for v := int16(4); v <= kmsg.NewPtrFetchResponse().MaxVersion(); v++ {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version, resp.ThrottleMillis, resp.SessionID = v, 5, 9
		for ti, topic := range []string{"a", "b"} {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = topic, [16]byte{byte(ti + 1)}
			for pi, records := range [][]byte{fresh(64<<10, 'x'), read[:100], nil, {}, fresh(200, 's'), fresh(3<<20, byte('y'+ti)), read} {
				p := kmsg.NewFetchResponseTopicPartition()
				p.Partition, p.HighWatermark, p.RecordBatches = int32(pi), 1000, records
				p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 3, FirstOffset: 4}}
				if v >= 12 {
					p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 2, 7 // a tagged field
				}
				rt.Partitions = append(rt.Partitions, p)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		if v >= 16 {
			resp.Brokers = []kmsg.FetchResponseBroker{{NodeID: 2, Host: "broker", Port: 9092}} // a top-level tagged field
		}
		check(t, fmt.Sprintf("Fetch v%d", v), resp, 4)
	}
	for v := int16(0); v <= wire.MaxVersion(wire.ShareFetchKey); v++ {
		resp := kmsg.NewPtrShareFetchResponse()
		resp.Version = v
		rt := kmsg.NewShareFetchResponseTopic()
		rt.TopicID = [16]byte{1}
		for pi, records := range [][]byte{read[:10], fresh(20<<10, 'z'), nil} {
			p := kmsg.NewShareFetchResponseTopicPartition()
			p.Partition, p.Records = int32(pi), records
			rt.Partitions = append(rt.Partitions, p)
		}
		resp.Topics = append(resp.Topics, rt)
		check(t, fmt.Sprintf("ShareFetch v%d", v), resp, 1)
	}
	if fields := freshRecordsFields(kmsg.NewPtrMetadataResponse(), read); fields != nil {
		t.Error("a Metadata response has records to write in place")
	}
}

// FuzzRecordsInPlace: any Fetch response kmsg decodes, its non-null
// records made fresh (copied out of the frame and grown past
// minSplicedRecords), is written in place exactly as kmsg encodes it.
func FuzzRecordsInPlace(f *testing.F) {
	for _, v := range []int16{4, 11, 12, 13, 16} {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = v
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "t"
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches = []byte{recordsPlaceholderLen, recordsPlaceholderLen + 1}
		rt.Partitions = append(rt.Partitions, p, p)
		resp.Topics = append(resp.Topics, rt)
		f.Add(uint8(v), resp.AppendTo(nil))
	}
	f.Fuzz(func(t *testing.T, version uint8, body []byte) {
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = int16(version) % (resp.MaxVersion() + 1)
		if resp.ReadFrom(body) != nil {
			return
		}
		n := 0
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				p := &resp.Topics[i].Partitions[j]
				if p.RecordBatches != nil && n < 8 {
					p.RecordBatches = append(bytes.Clone(p.RecordBatches), make([]byte, minSplicedRecords)...)
					n++
				}
			}
		}
		fields := freshRecordsFields(resp, body)
		encoded := protocol.AppendResponseFrame(nil, 1, resp)
		frame, _, pieces, err := appendSplicedResponseFrame(nil, nil, 1, resp, fields, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeFrame(&got, frame, pieces); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), encoded) {
			t.Fatalf("v%d: %d bytes written in place differ from the %d of the encoding", resp.Version, got.Len(), len(encoded))
		}
	})
}
