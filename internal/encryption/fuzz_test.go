package encryption

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// FuzzProduceThenFetch (seeds: the record rewriter's corpus, batches of
// every codec as producers write them): whatever bytes a producer sends
// as a partition's records to an encrypted topic, the filter refuses the
// partition with an error code, or forwards records franz-go decodes
// (lengths, CRCs, codecs) in which every data record carries the marker
// and no value is in the clear; fetched back through the filter they
// decrypt, with no error code, to the values franz-go reads in the input.
// It never panics. The KMS is local-kms.
func FuzzProduceThenFetch(f *testing.F) {
	for _, seed := range rewriterCorpus(f) {
		f.Add(seed)
	}
	f.Add(testkit.RecordBatch("card 4111", "", "card 5500"))
	// A whole batch, then one that claims a byte more than is sent: the
	// rewriter passes a partial batch on unread, as Fetch needs.
	partial := testkit.RecordBatch("card 3782")
	binary.BigEndian.PutUint32(partial[8:], binary.BigEndian.Uint32(partial[8:])+1)
	f.Add(append(testkit.RecordBatch("card 4111"), partial...))
	k := localkms.Start(f)
	k.CreateAlias("alias/kek", k.CreateKey())
	provider, err := kms.NewAWS(context.Background(), kms.AWSConfig{Endpoint: k.Endpoint(), Region: localkms.Region, Credentials: localkms.Credentials()})
	if err != nil {
		f.Fatal(err)
	}
	cfg := &encryptionconfig.Config{Topics: []encryptionconfig.TopicRule{{Match: "*", Key: "alias/kek", Encrypt: []string{"value", "headers"}}}}
	flt, err := New(cfg, Options{Env: filter.Env{Log: zerolog.Nop()}, Provider: provider})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		produceThenFetch(t, flt, in)
		// With valid CRCs, the mutations reach the records and codecs.
		produceThenFetch(t, flt, withBatchCRCs(in))
	})
}

func produceThenFetch(t *testing.T, flt *Filter, in []byte) {
	req := testkit.ProduceByName(9, -1, bytes.Clone(in), "orders")
	v := flt.produce(&filter.Conn{}, req)
	if v.Close != nil {
		t.Fatalf("an acks=-1 produce closed the connection: %v", v.Close)
	}
	if v.Respond != nil {
		resp := v.Respond.(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code == 0 {
			t.Fatal("a refused partition has no error code")
		}
		return
	}
	sealed := req.Topics[0].Partitions[0].Records
	if rest := partialTail(sealed); rest > 0 {
		t.Fatalf("forwarded records end with %d bytes of a partial batch, which no one read", rest)
	}
	stored := decode(t, "the forwarded records", sealed)
	for _, r := range stored {
		if r.Attrs.IsControl() {
			continue
		}
		if !hasMarker(r) {
			t.Fatalf("record at offset %d forwarded without the marker", r.Offset)
		}
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Topics = []kmsg.FetchResponseTopic{{Topic: "orders", Partitions: []kmsg.FetchResponseTopicPartition{{RecordBatches: bytes.Clone(sealed)}}}}
	if _, err := flt.fetch(resp); err != nil {
		t.Fatalf("fetch of what the filter sealed: %v", err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("fetch of what the filter sealed: error code %d", p.ErrorCode)
	}
	opened := decode(t, "the decrypted records", p.RecordBatches)
	original := decode(t, "the produced records", in)
	if len(opened) != len(original) {
		t.Fatalf("%d records decrypted, %d produced", len(opened), len(original))
	}
	for i := range opened {
		if !bytes.Equal(opened[i].Value, original[i].Value) || (opened[i].Value == nil) != (original[i].Value == nil) {
			t.Fatalf("record %d decrypted to %q, produced %q", i, opened[i].Value, original[i].Value)
		}
	}
}

// decode is what franz-go reads in batches, control records included.
func decode(t *testing.T, what string, batches []byte) []*kgo.Record {
	t.Helper()
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{KeepControlRecords: true},
		&kmsg.FetchResponseTopicPartition{RecordBatches: batches, HighWatermark: 1 << 62}, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil {
		t.Fatalf("franz-go cannot decode %s: %v", what, fp.Err)
	}
	return fp.Records
}

func hasMarker(r *kgo.Record) bool {
	for _, h := range r.Headers {
		if h.Key == envelope.HeaderName {
			return true
		}
	}
	return false
}

// partialTail is how many bytes at the end of batches are not a whole
// batch (or message set: their length field is at the same place).
func partialTail(batches []byte) int {
	for len(batches) >= 12 {
		size := 12 + int64(int32(binary.BigEndian.Uint32(batches[8:])))
		if size < 12 || size > int64(len(batches)) {
			break
		}
		batches = batches[size:]
	}
	return len(batches)
}

// withBatchCRCs is a copy of in with each v2 batch's CRC-32C made right.
func withBatchCRCs(in []byte) []byte {
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

// rewriterCorpus is the record rewriter's fuzz corpus: batches of each
// codec, raw and as franz-go producers write them.
func rewriterCorpus(f *testing.F) [][]byte {
	dir := filepath.Join("..", "..", "rewrite", "records", "testdata", "fuzz", "FuzzRewrite")
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatalf("the rewriter's corpus: %v", err)
	}
	var out [][]byte
	for _, e := range entries {
		text, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		// "go test fuzz v1\n[]byte(QUOTED)\n"
		_, arg, ok := strings.Cut(strings.TrimSpace(string(text)), "[]byte(")
		if !ok {
			f.Fatalf("%s: not a []byte corpus entry", e.Name())
		}
		b, err := strconv.Unquote(strings.TrimSuffix(arg, ")"))
		if err != nil {
			f.Fatalf("%s: %v", e.Name(), err)
		}
		out = append(out, []byte(b))
	}
	return out
}
