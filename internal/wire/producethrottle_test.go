package wire

import (
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// throttledProduceBody is an encoded Produce response of version with
// throttle, two topics of two partitions, record errors where the version
// has them.
func throttledProduceBody(version int16, throttle int32) []byte {
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(version)
	resp.ThrottleMillis = throttle
	for _, name := range []string{"a", "payments"} {
		topic := kmsg.NewProduceResponseTopic()
		topic.Topic = name
		topic.TopicID = [16]byte{9}
		for p := int32(0); p < 2; p++ {
			part := kmsg.NewProduceResponseTopicPartition()
			part.Partition = p
			part.BaseOffset = 1234
			msg := "bad batch"
			part.ErrorMessage = &msg
			part.ErrorRecords = []kmsg.ProduceResponseTopicPartitionErrorRecord{{RelativeOffset: 3, ErrorMessage: &msg}}
			topic.Partitions = append(topic.Partitions, part)
		}
		resp.Topics = append(resp.Topics, topic)
	}
	return resp.AppendTo(nil)
}

// TestProduceThrottleOffset: the offset found holds the encoded
// throttle_time_ms in every version that has it.
func TestProduceThrottleOffset(t *testing.T) {
	for v := int16(1); v <= MaxVersion(ProduceKey); v++ {
		body := throttledProduceBody(v, 0x01020304)
		off, err := ProduceThrottleOffset(v, body)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if got := binary.BigEndian.Uint32(body[off:]); got != 0x01020304 {
			t.Errorf("v%d: offset %d holds %#x, not throttle_time_ms", v, off, got)
		}
	}
	if _, err := ProduceThrottleOffset(0, nil); err == nil {
		t.Error("v0 has no throttle_time_ms, yet an offset was found")
	}
	for v := int16(1); v <= MaxVersion(ProduceKey); v++ {
		body := throttledProduceBody(v, 7)
		if _, err := ProduceThrottleOffset(v, body[:len(body)-5]); err == nil && !IsFlexible(ProduceKey, v) {
			t.Errorf("v%d: a truncated body gave an offset", v)
		}
	}
}

// FuzzProduceThrottleOffset: any body gives an error or an offset with
// room for the field, never a panic or a spin.
func FuzzProduceThrottleOffset(f *testing.F) {
	for _, v := range []int16{1, 2, 5, 8, 9, 13} {
		if v <= MaxVersion(ProduceKey) {
			f.Add(v, throttledProduceBody(v, 5))
		}
	}
	f.Add(int16(3), []byte{0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		if version < 0 || version > MaxVersion(ProduceKey) {
			return
		}
		off, err := ProduceThrottleOffset(version, body)
		if err == nil && (off < 0 || off+4 > len(body)) {
			t.Fatalf("offset %d in a body of %d bytes", off, len(body))
		}
	})
}
