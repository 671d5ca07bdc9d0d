package encryption

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/kms"
	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/localkms"
)

// benchFilter is a Filter encrypting record values of every topic under a
// local-kms key, as the bench's kproxy-encryption target does.
func benchFilter(b testing.TB) *Filter {
	k := localkms.Start(b)
	k.CreateAlias("alias/kek", k.CreateKey())
	provider, err := kms.NewAWS(context.Background(), kms.AWSConfig{Endpoint: k.Endpoint(), Region: localkms.Region, Credentials: localkms.Credentials()})
	if err != nil {
		b.Fatal(err)
	}
	cfg := &encryptionconfig.Config{Topics: []encryptionconfig.TopicRule{{Match: "*", Key: "alias/kek", Encrypt: []string{"value"}}}}
	f, err := New(cfg, Options{Env: filter.Env{Log: zerolog.Nop()}, Provider: provider})
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// benchRecords is one batch of n records of 1 KiB values, compressed
// with codec, as the bench's producer sends them.
func benchRecords(b *testing.B, codec kgo.CompressionCodec, n int) []byte {
	values := make([]string, n)
	for i := range values {
		v := make([]byte, 0, 1024)
		for len(v) < 1024 {
			v = fmt.Appendf(v, "record %d field %d; ", i, len(v))
		}
		values[i] = string(v[:1024])
	}
	return testkit.CompressedBatch(b, codec, values...)
}

// BenchmarkProduce encrypts one partition of one batch of 1000 records of
// 1 KiB per op; BenchmarkFetch decrypts it back ("sealed") or passes a
// batch without the marker ("plain").
func BenchmarkProduce(b *testing.B) {
	f := benchFilter(b)
	for _, c := range testkit.Codecs() {
		if c.Name != "none" && c.Name != "lz4" {
			continue
		}
		src := benchRecords(b, c.Codec, 1000)
		req := testkit.ProduceByName(9, -1, src, "orders")
		topics := req.Topics
		var sealed []byte
		b.Run("produce/"+c.Name, func(b *testing.B) {
			b.SetBytes(1000 * 1024)
			b.ReportAllocs()
			for b.Loop() {
				req.Topics = topics[:1]
				req.Topics[0].Partitions[0].Records = src
				v := f.produce(&filter.Conn{}, req)
				if v.Respond != nil || v.Close != nil {
					b.Fatalf("produce refused: %+v", v)
				}
				sealed = req.Topics[0].Partitions[0].Records
				if v.Release != nil {
					v.Release() // as the engine does once it has encoded the request
				}
			}
			sealed = slices.Clone(sealed) // before a produce reuses its buffer
		})
		for _, mode := range []string{"sealed", "plain"} {
			in := sealed
			if mode == "plain" {
				in = src
			}
			resp := kmsg.NewPtrFetchResponse()
			resp.Topics = []kmsg.FetchResponseTopic{{Topic: "orders", Partitions: []kmsg.FetchResponseTopicPartition{{}}}}
			b.Run("fetch/"+mode+"/"+c.Name, func(b *testing.B) {
				b.SetBytes(1000 * 1024)
				b.ReportAllocs()
				for b.Loop() {
					resp.Topics[0].Partitions[0].RecordBatches = in
					release, err := f.fetch(resp)
					if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
						b.Fatalf("fetch: %v, code %d", err, resp.Topics[0].Partitions[0].ErrorCode)
					}
					if release != nil {
						release() // as the engine does once it has written the response
					}
				}
			})
		}
	}
}
