package engine

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// FuzzValueSplices: a Fetch response whose partitions' records carry
// placeholders, at any version from v4 (int32 records lengths) to the
// newest (compact lengths from v12), laid out with the values in place of
// the placeholders, decodes to the same response with the values in the
// records: the records lengths and the frame size are right.
func FuzzValueSplices(f *testing.F) {
	f.Add(uint64(1), uint8(4), uint8(3))
	f.Add(uint64(2), uint8(11), uint8(1))
	f.Add(uint64(3), uint8(12), uint8(6))
	f.Add(uint64(4), uint8(17), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, v, n uint8) {
		version := int16(4 + int(v)%int((&kmsg.FetchResponse{}).MaxVersion()-3))
		rng := rand.New(rand.NewPCG(seed, uint64(v)))
		resp, want, splicer := splicedFetch(rng, version, 1+int(n)%8)
		frame := protocol.AppendResponseFrame(nil, 7, resp)
		pieces, size, err := planFetch(t, frame, version, resp, splicer.Splices())
		if err != nil {
			t.Fatal(err)
		}
		got := materialize(t, pieces)
		if int64(len(got)) != size {
			t.Fatalf("v%d: planned %d bytes, wrote %d", version, size, len(got))
		}
		checkFrame(t, version, got, want)
	})
}

// TestValueSpliceVersions lays out a response at every Fetch version the
// splicing supports, with a value large enough that the compact length
// grows by bytes, so that both length encodings and the prefix growth are
// exercised on every run.
func TestValueSpliceVersions(t *testing.T) {
	for version := int16(4); version <= (&kmsg.FetchResponse{}).MaxVersion(); version++ {
		rng := rand.New(rand.NewPCG(uint64(version), 9))
		resp, want, splicer := splicedFetch(rng, version, 3)
		big := make([]byte, 300_000) // a 3-byte compact length where the placeholders' took 1
		for i := range big {
			big[i] = byte(rng.Uint32())
		}
		part := &resp.Topics[0].Partitions[0]
		part.RecordBatches = append(part.RecordBatches, splicer.Add(int64(len(big)), opener(big))...)
		want[0][0] = append(want[0][0], big...)
		frame := protocol.AppendResponseFrame(nil, 7, resp)
		pieces, _, err := planFetch(t, frame, version, resp, splicer.Splices())
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		checkFrame(t, version, materialize(t, pieces), want)
	}
}

// TestValueSpliceMissingPlaceholder: a placeholder that is in no
// partition's records is an error, never a frame with a wrong size.
func TestValueSpliceMissingPlaceholder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	resp, _, splicer := splicedFetch(rng, 12, 2)
	splicer.Add(10, opener(make([]byte, 10))) // never put in the records
	frame := protocol.AppendResponseFrame(nil, 7, resp)
	if _, _, err := planFetch(t, frame, 12, resp, splicer.Splices()); err == nil {
		t.Fatal("a placeholder missing from the records was laid out")
	}
}

// splicedFetch is a Fetch response at version with a few topics and
// partitions whose records are random bytes with n placeholders at random
// places, the records each partition should carry once the values are
// spliced in (want[topic][partition]), and the Splicer holding the values.
func splicedFetch(rng *rand.Rand, version int16, n int) (*kmsg.FetchResponse, [][][]byte, *filter.Splicer) {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	random := func(k int) []byte {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	var splicer filter.Splicer
	var want [][][]byte
	topics := 1 + rng.IntN(3)
	for ti := range topics {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = "topic-" + string(rune('a'+ti))
		t.TopicID = [16]byte{byte(ti + 1)}
		want = append(want, nil)
		for pi := range 1 + rng.IntN(3) {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(pi)
			p.HighWatermark = rng.Int64N(1 << 40)
			var records, expect []byte
			for range rng.IntN(4) {
				chunk := random(rng.IntN(300))
				records, expect = append(records, chunk...), append(expect, chunk...)
				if n == 0 {
					continue
				}
				n--
				value := random(rng.IntN(3000))
				records = append(records, splicer.Add(int64(len(value)), opener(value))...)
				expect = append(expect, value...)
			}
			p.RecordBatches, want[ti] = records, append(want[ti], expect)
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp, want, &splicer
}

func opener(value []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(value)), nil }
}

// materialize writes pieces as the engine does, values read through
// their Open.
func materialize(t *testing.T, pieces []framePiece) []byte {
	t.Helper()
	var out []byte
	for _, pc := range pieces {
		if pc.splice == nil {
			out = append(out, pc.raw...)
			continue
		}
		src, err := pc.splice.Open()
		if err != nil {
			t.Fatal(err)
		}
		value, _ := io.ReadAll(src)
		if int64(len(value)) != pc.splice.Size {
			t.Fatalf("value of %d bytes, size says %d", len(value), pc.splice.Size)
		}
		out = append(out, value...)
	}
	return out
}

// checkFrame decodes frame as the client does and compares each
// partition's records with want.
func checkFrame(t *testing.T, version int16, frame []byte, want [][][]byte) {
	t.Helper()
	if got := int(binary.BigEndian.Uint32(frame)); got != len(frame)-protocol.FrameSizeLen {
		t.Fatalf("v%d: frame size %d, frame of %d bytes after it", version, got, len(frame)-protocol.FrameSizeLen)
	}
	body, err := wire.SkipResponseHeader(kmsg.Fetch.Int16(), version, frame[protocol.FrameSizeLen:])
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := protocol.DecodeResponse(kmsg.Fetch.Int16(), version, body)
	if err != nil {
		t.Fatalf("v%d: the spliced frame does not decode: %v", version, err)
	}
	resp := decoded.(*kmsg.FetchResponse)
	if len(resp.Topics) != len(want) {
		t.Fatalf("v%d: %d topics, want %d", version, len(resp.Topics), len(want))
	}
	for ti, topic := range resp.Topics {
		if len(topic.Partitions) != len(want[ti]) {
			t.Fatalf("v%d: topic %d: %d partitions, want %d", version, ti, len(topic.Partitions), len(want[ti]))
		}
		for pi, p := range topic.Partitions {
			if !bytes.Equal(p.RecordBatches, want[ti][pi]) {
				t.Fatalf("v%d: topic %d partition %d: records of %d bytes differ from the %d expected", version, ti, pi, len(p.RecordBatches), len(want[ti][pi]))
			}
		}
	}
}

// planFetch is planValueSplices of a Fetch response at version.
func planFetch(t *testing.T, frame []byte, version int16, resp *kmsg.FetchResponse, splices []filter.Splice) ([]framePiece, int64, error) {
	t.Helper()
	records, compact, ok := splicedPartitions(resp, version)
	if !ok {
		t.Fatal("a Fetch response is not one splicedPartitions reads")
	}
	return planValueSplices(frame, compact, records, splices)
}
