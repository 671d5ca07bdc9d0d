package records_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/rewrite/records"
)

// benchBatch is a batch of 100 records of 1 KiB values (text, so that the
// codecs have something to compress), compressed with codec.
func benchBatch(b testing.TB, codec kgo.CompressionCodec) []byte {
	values := make([]string, 100)
	for i := range values {
		v := make([]byte, 0, 1024)
		for len(v) < 1024 {
			v = fmt.Appendf(v, "record %d field %d; ", i, len(v))
		}
		values[i] = string(v[:1024])
	}
	return testkit.CompressedBatch(b, codec, values...)
}

// BenchmarkRewrite rewrites one batch per op: "changed" reverses every
// value (decode, re-encode, recompress), "unchanged" leaves them (decode
// only; the input is handed back). Allocations per op are per batch of
// 100 records.
func BenchmarkRewrite(b *testing.B) {
	for _, c := range testkit.Codecs() {
		for _, mode := range []string{"changed", "unchanged"} {
			b.Run(c.Name+"/"+mode, func(b *testing.B) {
				in := benchBatch(b, c.Codec)
				fn := reverseValues()
				if mode == "unchanged" {
					fn = func(*records.Batch, *records.Record) error { return nil }
				}
				rw := records.NewRewriter(1 << 20)
				var out []byte
				b.SetBytes(int64(100 * 1024))
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if out, _, err = rw.Rewrite(out[:0], in, fn); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
