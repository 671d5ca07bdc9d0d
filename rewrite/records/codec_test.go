package records_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/rewrite/records"
)

// TestRawSnappyStaysRaw: snappy without the xerial framing (as
// librdkafka writes it) is rewritten as raw snappy.
func TestRawSnappyStaysRaw(t *testing.T) {
	in := testkit.CompressedBatch(t, kgo.SnappyCompression(), "one", "two")
	out, _, err := records.NewRewriter(limit).Rewrite(nil, in, reverseValues())
	if err != nil {
		t.Fatal(err)
	}
	if rs := decoded(t, out); len(rs) != 2 || string(rs[1].Value) != "owt" {
		t.Fatalf("records %v", rs)
	}
	if bytes.HasPrefix(out[61:], []byte("\x82SNAPPY")) {
		t.Error("raw snappy came out xerial framed")
	}
}

// TestXerialSnappyStaysXerial: snappy in the xerial framing Java
// producers write (here in 16 KiB blocks) is rewritten xerial framed, and
// franz-go reads it.
func TestXerialSnappyStaysXerial(t *testing.T) {
	values := make([]string, 40)
	for i := range values {
		values[i] = strings.Repeat(string(rune('a'+i%26)), 1023) + "!"
	}
	plain := testkit.RecordBatch(values...)
	xerial := []byte("\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01")
	for recs := plain[61:]; len(recs) > 0; {
		n := min(len(recs), 16<<10)
		block := s2.EncodeSnappy(nil, recs[:n])
		xerial = append(binary.BigEndian.AppendUint32(xerial, uint32(len(block))), block...)
		recs = recs[n:]
	}
	in := append(bytes.Clone(plain[:61]), xerial...)
	binary.BigEndian.PutUint16(in[21:], 2) // snappy
	binary.BigEndian.PutUint32(in[8:], uint32(len(in)-12))
	binary.BigEndian.PutUint32(in[17:], crc32.Checksum(in[21:], crc32.MakeTable(crc32.Castagnoli)))

	out, _, err := records.NewRewriter(limit).Rewrite(nil, in, reverseValues())
	if err != nil {
		t.Fatal(err)
	}
	if rs := decoded(t, out); len(rs) != 40 || string(rs[39].Value) != string(reversed([]byte(values[39]))) {
		t.Fatalf("%d records", len(rs))
	}
	if !bytes.HasPrefix(out[61:], xerial[:16]) {
		t.Error("xerial snappy came out without the xerial framing")
	}
}

// TestDecompressionBombs: a batch of under 1 MiB that decompresses to
// 32 MiB (16 MiB for snappy, which compresses zeros only 21:1) is
// ErrTooLarge for a Rewriter limited to 1 MiB, whatever the
// codec, and costs far less memory than it would decompress to: the
// limit, and for lz4 the block buffers of the 4 MiB blocks a frame may
// declare (and franz-go producers write).
func TestDecompressionBombs(t *testing.T) {
	for _, c := range testkit.Codecs()[1:] {
		t.Run(c.Name, func(t *testing.T) {
			size := 32 << 20
			if c.Name == "snappy" {
				size = 16 << 20
			}
			in := testkit.CompressedBatch(t, c.Codec, string(make([]byte, size)))
			if len(in) > 1<<20 {
				t.Fatalf("the bomb is %d bytes compressed", len(in))
			}
			// The least of three tries: TotalAlloc counts every
			// goroutine's allocations, other tests' included.
			least := uint64(1 << 62)
			for range 3 {
				rw := records.NewRewriter(1 << 20)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, _, err := rw.Rewrite(nil, in, reverseValues())
				runtime.ReadMemStats(&after)
				if !errors.Is(err, records.ErrTooLarge) {
					t.Fatalf("error %v, want ErrTooLarge", err)
				}
				least = min(least, after.TotalAlloc-before.TotalAlloc)
			}
			// lz4 takes its 4 MiB block buffers from a sync.Pool, which
			// the race detector empties at random: every try may
			// allocate them afresh there, whatever the limit.
			if least > 8<<20 && !(raceDetector && c.Name == "lz4") {
				t.Errorf("allocated %d bytes for a batch limited to 1 MiB", least)
			}
		})
	}
}

// TestLZ4WritesNoContentChecksum: a rewritten lz4 batch's frame carries
// no content checksum (FLG bit 2), as Kafka's Java clients write it: the
// batch CRC covers the bytes, and hashing them again costs CPU. franz-go
// still reads it.
func TestLZ4WritesNoContentChecksum(t *testing.T) {
	in := testkit.CompressedBatch(t, kgo.Lz4Compression(), "one", "two")
	out, _, err := records.NewRewriter(limit).Rewrite(nil, in, reverseValues())
	if err != nil {
		t.Fatal(err)
	}
	if flg := out[61+4]; flg&0x04 != 0 {
		t.Errorf("lz4 frame flags %#02x: content checksum set", flg)
	}
	if rs := decoded(t, out); len(rs) != 2 || string(rs[1].Value) != "owt" {
		t.Fatalf("records %v", rs)
	}
}
