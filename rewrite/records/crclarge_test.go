package records_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/rewrite/records"
)

// largeRecords make batches of hundreds of KiB, each record carrying
// the mark: larger than the processor's first caches, so that a change
// summing CRCs piece by piece (to sum bytes while they are in cache) is
// tested where pieces meet.
func largeRecords(n, size int) []*kgo.Record {
	rs := testRecords(n)
	for i, r := range rs {
		if r.Value != nil {
			r.Value = bytes.Repeat([]byte{byte('a' + i%26)}, size)
		}
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "mark"})
	}
	return rs
}

// TestCRCsOfLargeBatches: batches of several hundred KiB, rewritten by
// Rewrite and RewriteMarked, come out with CRCs that cover every byte
// (a piece summed twice or skipped would show), and decode to the
// reversed values.
func TestCRCsOfLargeBatches(t *testing.T) {
	rs := largeRecords(120, 5000)
	raw := storedBatches(t, false, rs, kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for name, rewrite := range map[string]func(rw *records.Rewriter) ([]byte, records.Summary, error){
		"Rewrite": func(rw *records.Rewriter) ([]byte, records.Summary, error) {
			return rw.Rewrite(nil, raw, reverseValues())
		},
		"RewriteMarked": func(rw *records.Rewriter) ([]byte, records.Summary, error) {
			return rw.RewriteMarked(nil, raw, []byte("mark"), reverseValues())
		},
	} {
		t.Run(name, func(t *testing.T) {
			out, sum, err := rewrite(records.NewRewriter(limit))
			if err != nil || sum.Changed == 0 {
				t.Fatalf("changed %d batches, error %v", sum.Changed, err)
			}
			for at := 0; at < len(out); {
				length := int(binary.BigEndian.Uint32(out[at+8:]))
				batch := out[at : at+12+length]
				if want, got := binary.BigEndian.Uint32(batch[17:]), crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)); got != want {
					t.Fatalf("batch at byte %d of %d: CRC says %#08x, its bytes sum to %#08x", at, length, want, got)
				}
				at += len(batch)
			}
			got := decoded(t, out)
			if len(got) != len(rs) {
				t.Fatalf("%d records, want %d", len(got), len(rs))
			}
			for i, r := range got {
				if !bytes.Equal(r.Value, reversed(rs[i].Value)) {
					t.Fatalf("record %d: value of %d bytes is not the original reversed", i, len(r.Value))
				}
			}
		})
	}
}

// TestCorruptionIsFoundWhereverItIs: a byte flipped in a marked,
// uncompressed batch, at its first record, in its middle or in its last
// byte, is ErrCorrupt from RewriteMarked, also where the damage would
// make the records fail to decode or the Func fail: the caller hears of
// the corruption, whatever order the checks run in.
func TestCorruptionIsFoundWhereverItIs(t *testing.T) {
	raw := storedBatches(t, false, largeRecords(60, 5000), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	first := int(binary.BigEndian.Uint32(raw[8:])) + 12
	refuseAll := errors.New("the Func refuses a changed value")
	for name, at := range map[string]int{"first record": 61 + 3, "middle": first / 2, "last byte": first - 1} {
		corrupt := bytes.Clone(raw)
		corrupt[at] ^= 0x40
		for fnName, fn := range map[string]records.Func{"reverse": reverseValues(), "refuse": func(_ *records.Batch, r *records.Record) error {
			if r.Value != nil && r.Value[0] != r.Value[len(r.Value)-1] {
				return refuseAll
			}
			return nil
		}} {
			if _, _, err := records.NewRewriter(limit).RewriteMarked(nil, corrupt, []byte("mark"), fn); !errors.Is(err, records.ErrCorrupt) {
				t.Errorf("%s flipped, %s: error %v, want ErrCorrupt", name, fnName, err)
			}
		}
	}
}

// TestIntactBatchKeepsItsError: with the CRC right, Rewrite and
// RewriteMarked stop on what is wrong with the records themselves: a
// record length that overruns the batch is ErrMalformed, and a Func's
// refusal is the Func's error; neither becomes ErrCorrupt.
func TestIntactBatchKeepsItsError(t *testing.T) {
	raw := storedBatches(t, false, largeRecords(60, 5000), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	first := int(binary.BigEndian.Uint32(raw[8:])) + 12
	malformed := bytes.Clone(raw)
	malformed[61] = 0x7e // the first record's length varint: 63, less than the record
	binary.BigEndian.PutUint32(malformed[17:], crc32.Checksum(malformed[21:first], crc32.MakeTable(crc32.Castagnoli)))
	for _, rewrite := range []func(*records.Rewriter, []byte, records.Func) ([]byte, records.Summary, error){
		func(rw *records.Rewriter, src []byte, fn records.Func) ([]byte, records.Summary, error) {
			return rw.Rewrite(nil, src, fn)
		},
		func(rw *records.Rewriter, src []byte, fn records.Func) ([]byte, records.Summary, error) {
			return rw.RewriteMarked(nil, src, []byte("mark"), fn)
		},
	} {
		_, _, err := rewrite(records.NewRewriter(limit), malformed, reverseValues())
		if !errors.Is(err, records.ErrMalformed) || errors.Is(err, records.ErrCorrupt) {
			t.Errorf("record length overrunning, CRC right: error %v, want ErrMalformed", err)
		}
		refuse := errors.New("refused")
		_, _, err = rewrite(records.NewRewriter(limit), raw, func(*records.Batch, *records.Record) error { return refuse })
		if !errors.Is(err, refuse) {
			t.Errorf("a Func refusing an intact batch: error %v, want its own", err)
		}
	}
}
