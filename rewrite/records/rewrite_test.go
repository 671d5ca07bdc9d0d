package records_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/rewrite/records"
)

const limit = 1 << 20

// producers are the kinds of franz-go producer whose batches the tests
// rewrite.
var producers = []struct {
	name          string
	transactional bool
	opts          []kgo.Opt
}{
	{"idempotent", false, nil},
	{"transactional", true, nil},
	{"plain", false, []kgo.Opt{kgo.DisableIdempotentWrite()}},
}

// forEachStored runs test on the batches each producer kind writes with
// each codec.
func forEachStored(t *testing.T, test func(t *testing.T, codec string, raw []byte)) {
	for _, c := range testkit.Codecs() {
		for _, p := range producers {
			t.Run(c.Name+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				opts := append([]kgo.Opt{kgo.ProducerBatchCompression(c.Codec)}, p.opts...)
				test(t, c.Name, storedBatches(t, p.transactional, testRecords(40), opts...))
			})
		}
	}
}

// TestUnchangedIsIdentical: a Func that changes nothing, or hands back
// the very slices it was given, leaves every byte as it was, and Rewrite
// hands back the input itself.
func TestUnchangedIsIdentical(t *testing.T) {
	forEachStored(t, func(t *testing.T, _ string, raw []byte) {
		rw := records.NewRewriter(limit)
		for name, fn := range map[string]records.Func{
			"nothing": func(*records.Batch, *records.Record) error { return nil },
			"same slices": func(_ *records.Batch, r *records.Record) error {
				r.Value = r.Value[:len(r.Value):len(r.Value)]
				return nil
			},
		} {
			out, sum, err := rw.Rewrite(nil, raw, fn)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(out, raw) || &out[0] != &raw[0] || sum.Changed != 0 || sum.Records != 40 {
				t.Errorf("%s: %d bytes out of %d, summary %+v", name, len(out), len(raw), sum)
			}
		}
	})
}

// TestTransformKeepsEverythingElse: values reversed by the Func are what
// a franz-go consumer reads; keys, headers, tombstones, offsets,
// timestamps, producer fields and every batch header field but the
// length and CRC are as the producer wrote them, and the codec too.
func TestTransformKeepsEverythingElse(t *testing.T) {
	forEachStored(t, func(t *testing.T, _ string, raw []byte) {
		out, sum, err := records.NewRewriter(limit).Rewrite(nil, raw, reverseValues())
		if err != nil {
			t.Fatal(err)
		}
		before, after := decoded(t, raw), decoded(t, out)
		if len(after) != len(before) || sum.Records != 40 || sum.Changed == 0 {
			t.Fatalf("%d records out of %d; summary %+v", len(after), len(before), sum)
		}
		for i, want := range before {
			got := after[i]
			want.Value = reversed(want.Value)
			if g, w := fmt.Sprintf("%q %q %v %d %v %d %d %d %d", got.Key, got.Value, got.Headers, got.Offset, got.Timestamp, got.ProducerID, got.ProducerEpoch, got.LeaderEpoch, got.Attrs),
				fmt.Sprintf("%q %q %v %d %v %d %d %d %d", want.Key, want.Value, want.Headers, want.Offset, want.Timestamp, want.ProducerID, want.ProducerEpoch, want.LeaderEpoch, want.Attrs); g != w {
				t.Errorf("record %d:\n got %s\nwant %s", i, g, w)
			}
			if (got.Value == nil) != (want.Value == nil) {
				t.Errorf("record %d: value nil %v, want nil %v", i, got.Value == nil, want.Value == nil)
			}
		}
		if xerial := []byte("\x82SNAPPY\x00"); bytes.Contains(raw, xerial) != bytes.Contains(out, xerial) {
			t.Error("the snappy framing changed (xerial, as Java producers write, or raw)")
		}
		hb, ha := batchHeaders(t, raw), batchHeaders(t, out)
		if len(ha) != len(hb) || sum.Batches != len(hb) {
			t.Fatalf("%d batches out of %d; summary %+v", len(ha), len(hb), sum)
		}
		for i := range hb {
			b, a := hb[i], ha[i]
			b.Length, b.CRC, a.Length, a.CRC = 0, 0, 0, 0
			if fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
				t.Errorf("batch %d header:\n got %+v\nwant %+v", i, a, b)
			}
		}
	})
}

// TestControlBatchesPassUnseen: a transactional producer's commit marker
// is never handed to the Func and stays as it was.
func TestControlBatchesPassUnseen(t *testing.T) {
	raw := storedBatches(t, true, testRecords(4))
	var seen int
	out, sum, err := records.NewRewriter(limit).Rewrite(nil, raw, func(b *records.Batch, r *records.Record) error {
		if b.Control() || !b.Transactional() {
			t.Errorf("Func handed a batch with attributes %#x", b.Attributes)
		}
		seen++
		r.Value = []byte("x")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := batchHeaders(t, raw)
	marker := hs[len(hs)-1]
	if marker.Attributes&0x20 == 0 || seen != 4 || sum.Batches != len(hs) {
		t.Fatalf("last batch attributes %#x, %d records seen, summary %+v", marker.Attributes, seen, sum)
	}
	if !bytes.HasSuffix(out, raw[len(raw)-int(12+marker.Length):]) {
		t.Error("the commit marker changed")
	}
}

// TestTruncatedTailPassesThrough: a Fetch response ending in part of a
// batch gets the complete batches rewritten and the part as it was.
func TestTruncatedTailPassesThrough(t *testing.T) {
	raw := storedBatches(t, false, testRecords(40), kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	first := 12 + int(batchHeaders(t, raw)[0].Length)
	for _, cut := range []int{first + 5, first + 30, len(raw) - 1} {
		in := raw[:cut]
		out, sum, err := records.NewRewriter(limit).Rewrite(nil, in, reverseValues())
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if sum.Truncated != cut-first || sum.Changed != 1 || !bytes.HasSuffix(out, raw[first:cut]) {
			t.Errorf("cut at %d: summary %+v", cut, sum)
		}
	}
}

// TestLegacyMessageSetsPassThrough: a magic 1 message set is reported
// and left as it is, the v2 batch after it rewritten.
func TestLegacyMessageSetsPassThrough(t *testing.T) {
	batch := storedBatches(t, false, testRecords(2), kgo.DisableIdempotentWrite())
	// offset 0, size 24, crc, magic 1, attributes, timestamp, null key, value "ab"
	legacy := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 24, 1, 2, 3, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2, 'a', 'b'}
	in := append(append([]byte{}, legacy...), batch...)
	out, sum, err := records.NewRewriter(limit).Rewrite(nil, in, reverseValues())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Legacy != 1 || sum.Changed != 1 || !bytes.HasPrefix(out, legacy) {
		t.Fatalf("summary %+v", sum)
	}
	if rs := decoded(t, out[len(legacy):]); len(rs) != 2 || string(rs[0].Value) != string(reversed(testRecords(2)[0].Value)) {
		t.Errorf("rewritten batch after the message set: %v", rs)
	}
}

// TestFuncErrorStops: a Func's error is Rewrite's, naming the offset.
func TestFuncErrorStops(t *testing.T) {
	raw := storedBatches(t, false, testRecords(4))
	refuse := errors.New("no key for topic")
	_, _, err := records.NewRewriter(limit).Rewrite(nil, raw, func(_ *records.Batch, r *records.Record) error {
		if r.OffsetDelta == 1 {
			return refuse
		}
		return nil
	})
	if !errors.Is(err, refuse) {
		t.Fatalf("error %v", err)
	}
}

// TestBadBatchesAreErrors: a flipped byte fails the CRC; a batch over the
// limit is too large.
func TestBadBatchesAreErrors(t *testing.T) {
	raw := storedBatches(t, false, testRecords(4), kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	corrupt := bytes.Clone(raw)
	corrupt[len(corrupt)-1] ^= 1
	if _, _, err := records.NewRewriter(limit).Rewrite(nil, corrupt, reverseValues()); !errors.Is(err, records.ErrCorrupt) {
		t.Errorf("flipped byte: %v", err)
	}
	if _, _, err := records.NewRewriter(60).Rewrite(nil, raw, reverseValues()); !errors.Is(err, records.ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
}

// TestHeaderAdded: a Func may add a header (as an offload filter marks a
// pointer record); what it does to the read-only fields is ignored, so
// offsets and timestamps stay right.
func TestHeaderAdded(t *testing.T) {
	raw := storedBatches(t, false, testRecords(6), kgo.ProducerBatchCompression(kgo.GzipCompression()))
	out, _, err := records.NewRewriter(limit).Rewrite(nil, raw, func(_ *records.Batch, r *records.Record) error {
		r.Headers = append(r.Headers, records.Header{Key: []byte("format"), Value: []byte("v1")})
		r.OffsetDelta, r.TimestampDelta = 99, 99
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before, after := decoded(t, raw), decoded(t, out)
	for i, got := range after {
		want := before[i]
		h := got.Headers
		if len(h) != len(want.Headers)+1 || h[len(h)-1].Key != "format" || string(h[len(h)-1].Value) != "v1" ||
			got.Offset != want.Offset || !got.Timestamp.Equal(want.Timestamp) || !bytes.Equal(got.Value, want.Value) {
			t.Errorf("record %d: %+v, from %+v", i, got, want)
		}
	}
}
