package records_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/rewrite/records"
)

// TestNoAllocationsInSteadyState: once a Rewriter has rewritten a batch,
// rewriting more batches like it allocates nothing, uncompressed or lz4,
// changed or not (BenchmarkRewrite measures the other codecs).
func TestNoAllocationsInSteadyState(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	for _, c := range []struct {
		name  string
		codec kgo.CompressionCodec
	}{{"none", kgo.NoCompression()}, {"lz4", kgo.Lz4Compression()}} {
		in := benchBatch(t, c.codec)
		for mode, fn := range map[string]records.Func{
			"changed":   reverseValues(),
			"unchanged": func(*records.Batch, *records.Record) error { return nil },
		} {
			rw := records.NewRewriter(1 << 20)
			var out []byte
			rewrite := func() {
				var err error
				if out, _, err = rw.Rewrite(out[:0], in, fn); err != nil {
					t.Fatal(err)
				}
			}
			rewrite()
			if allocs := testing.AllocsPerRun(20, rewrite); allocs != 0 {
				t.Errorf("%s %s: %.1f allocations per batch of 100 records", c.name, mode, allocs)
			}
		}
	}
}
