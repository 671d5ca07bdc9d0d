package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceBody encodes a Produce request body with kmsg, with one topic and a
// record batch after acks, so the acks field is never at the end.
func produceBody(version int16, txnID *string, acks int16) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	req.TransactionID = txnID
	req.Acks = acks
	req.TimeoutMillis = 30000
	p := kmsg.NewProduceRequestTopicPartition()
	p.Partition = 3
	p.Records = []byte("not really a record batch, but opaque to kmsg")
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "orders"
	topic.TopicID = [16]byte{1, 2, 3}
	topic.Partitions = []kmsg.ProduceRequestTopicPartition{p}
	req.Topics = []kmsg.ProduceRequestTopic{topic}
	return req.AppendTo(nil)
}

// acksOffset is where acks starts in a Produce body, computed from the wire
// format rather than from ProduceAcks: nothing before it below v3, a
// nullable transactional id before it from v3, compact from the first
// flexible version.
func acksOffset(version int16, txnID *string) int {
	if version < 3 {
		return 0
	}
	if kmsgRequestFlexible(ProduceKey, version) {
		if txnID == nil {
			return 1
		}
		return len(binary.AppendUvarint(nil, uint64(len(*txnID)+1))) + len(*txnID)
	}
	if txnID == nil {
		return 2
	}
	return 2 + len(*txnID)
}

func TestProduceAcks(t *testing.T) {
	maxV := kmsgMaxVersion(ProduceKey)
	if maxV < 9 {
		t.Fatalf("kmsg Produce max version %d; expected flexible versions", maxV)
	}
	txnIDs := []*string{nil, strPtr(""), strPtr("txn-1"), strPtr(strings.Repeat("t", 127)), strPtr(strings.Repeat("T", 20000))}
	for v := int16(0); v <= maxV; v++ {
		for _, txn := range txnIDs {
			for _, acks := range []int16{-1, 0, 1} {
				t.Run(fmt.Sprintf("v%d/txn-%s/acks%d", v, describeClientID(txn), acks), func(t *testing.T) {
					body := produceBody(v, txn, acks)
					got, err := ProduceAcks(v, body)
					if err != nil || got != acks {
						t.Fatalf("ProduceAcks = %d, %v; want %d", got, err, acks)
					}
					end := acksOffset(v, txn) + 2
					if int16(binary.BigEndian.Uint16(body[end-2:])) != acks {
						t.Fatalf("test bug: acks not at offset %d", end-2)
					}
					// Every body cut before the end of acks is an error; the
					// first cut that holds acks is enough.
					for n := 0; n < end; n++ {
						if a, err := ProduceAcks(v, body[:n:n]); !errors.Is(err, ErrShortBuffer) {
							t.Fatalf("body truncated to %d (acks ends at %d): %d, %v; want ErrShortBuffer", n, end, a, err)
						}
					}
					if a, err := ProduceAcks(v, body[:end:end]); err != nil || a != acks {
						t.Fatalf("body truncated right after acks: %d, %v", a, err)
					}
				})
			}
		}
	}
}

// TestProduceAcksAboveMax: a version above kmsg's max is read like the max
// (flexible), which is what the proxy sees before it rejects the version.
func TestProduceAcksAboveMax(t *testing.T) {
	maxV := kmsgMaxVersion(ProduceKey)
	body := produceBody(maxV, strPtr("t"), -1)
	if got, err := ProduceAcks(maxV+1, body); err != nil || got != -1 {
		t.Fatalf("ProduceAcks(v%d) = %d, %v", maxV+1, got, err)
	}
}

func TestProduceAcksMalformed(t *testing.T) {
	flex := int16(9)
	cases := []struct {
		name    string
		version int16
		body    []byte
		want    error
	}{
		{"v9 compact length varint too long", flex, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, 1}, ErrMalformed},
		{"v9 compact length varint cut", flex, []byte{0x80, 0x80}, ErrShortBuffer},
		{"v9 compact length huge", flex, []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0, 1}, ErrShortBuffer},
		{"v3 length beyond body", 3, []byte{0x7f, 0xff, 'a', 0, 1}, ErrShortBuffer},
		{"v3 empty", 3, nil, ErrShortBuffer},
		{"v0 one byte", 0, []byte{0}, ErrShortBuffer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, err := ProduceAcks(c.version, c.body); !errors.Is(err, c.want) {
				t.Fatalf("ProduceAcks = %d, %v; want %v", got, err, c.want)
			}
		})
	}
}
