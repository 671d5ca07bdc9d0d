package records_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/rewrite/records"
)

// FuzzRewrite (seeds in testdata/fuzz: batches of each codec, raw and as
// franz-go producers write them): whatever the bytes, Rewrite returns a clean error or
// records franz-go decodes (CRCs, lengths and compression included), which
// a second Rewrite reads again with the same counts; it never panics.
func FuzzRewrite(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		rewriteChecked(t, in)
		// With valid CRCs, the mutations reach the records and codecs.
		rewriteChecked(t, withCRCs(in))
		headerChecked(t, withCRCs(in))
	})
}

// headerChecked: when MayHoldHeader says no record of in carries the
// header, and when AnyRecord finds no value above 8 bytes, a Rewrite
// hands over no record that does (a Fetch response or a produced
// partition judged so is forwarded without being decoded).
func headerChecked(t *testing.T, in []byte) {
	key := []byte("trace-id")
	noHeader := !records.MayHoldHeader(in, key)
	noLarge := records.PassesUnread(in, func(recs []byte) bool {
		return !records.AnyRecord(recs, func(r records.RawRecord) bool { return len(r.Value) > 8 })
	})
	if !noHeader && !noLarge {
		return
	}
	_, _, err := records.NewRewriter(1<<16).Rewrite(nil, in, func(_ *records.Batch, r *records.Record) error {
		for _, h := range r.Headers {
			if noHeader && bytes.Equal(h.Key, key) {
				t.Fatalf("MayHoldHeader said no record carries %q, but Rewrite handed one over", key)
			}
		}
		if noLarge && len(r.Value) > 8 {
			t.Fatalf("AnyRecord found no value above 8 bytes, but Rewrite handed one of %d over", len(r.Value))
		}
		return nil
	})
	_ = err // malformed input may fail; only a handed-over record is wrong
}

// withCRCs is a copy of in with each batch's CRC-32C made right.
func withCRCs(in []byte) []byte {
	in = bytes.Clone(in)
	for rest := in; len(rest) >= 61; {
		size := 12 + int64(int32(binary.BigEndian.Uint32(rest[8:])))
		if size < 61 || size > int64(len(rest)) {
			break
		}
		binary.BigEndian.PutUint32(rest[17:], crc32.Checksum(rest[21:size], crc32.MakeTable(crc32.Castagnoli)))
		rest = rest[size:]
	}
	return in
}

func rewriteChecked(t *testing.T, in []byte) {
	rw := records.NewRewriter(1 << 16)
	out, sum, err := rw.Rewrite(nil, in, reverseValues())
	if err != nil {
		return
	}
	again, sum2, err := rw.Rewrite(nil, out, func(*records.Batch, *records.Record) error { return nil })
	if err != nil {
		t.Fatalf("rewritten records do not read again: %v", err)
	}
	if !bytes.Equal(again, out) || sum2.Changed != 0 || sum2.Batches != sum.Batches || sum2.Records != sum.Records || sum2.Legacy != sum.Legacy || sum2.Truncated != sum.Truncated {
		t.Fatalf("second read %+v, first %+v", sum2, sum)
	}
	if sum.Legacy > 0 || sum.Truncated > 0 || sum.Changed == 0 {
		return // passed through unread: not ours to vouch for
	}
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{KeepControlRecords: true},
		&kmsg.FetchResponseTopicPartition{RecordBatches: out, HighWatermark: 1 << 62}, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		t.Fatalf("franz-go cannot decode the rewritten records: %v", fp.Err)
	}
}
