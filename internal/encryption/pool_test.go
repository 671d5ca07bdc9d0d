package encryption

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/testkit"
)

// TestLargeWorkersAreNotPooled: after encrypting a batch of 12 MiB (lz4,
// so it is small on the wire), the workers the filter keeps for the next
// requests hold at most maxPooledWorker bytes of buffers: one large batch
// does not pin its size in memory for as long as the process runs.
func TestLargeWorkersAreNotPooled(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	f := benchFilter(t)
	values := make([]string, 12<<10)
	for i := range values {
		values[i] = strings.Repeat("v", 1024)
	}
	src := testkit.CompressedBatch(t, kgo.Lz4Compression(), values...)
	req := testkit.ProduceByName(9, -1, src, "orders")
	if v := f.produce(&filter.Conn{}, req); v.Respond != nil || v.Close != nil {
		t.Fatalf("produce refused: %+v", v)
	}
	w := f.worker()
	defer f.done(w)
	if got := w.retained(); got > maxPooledWorker {
		t.Errorf("the pooled worker keeps %d bytes of buffers, want at most %d", got, maxPooledWorker)
	}
}
