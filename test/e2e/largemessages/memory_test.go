package e2elargemessages

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// Sizes of the memory test: a 500 MiB record, and the client and kproxy
// limits docs/large-messages.md gives for records of that size.
const (
	hugeRecord    = 500 << 20
	hugeFrame     = 520 << 20 // limits.max_frame_bytes: the produce request holding the record
	hugeClientMax = 530 << 20 // the clients' batch, fetch and read limits
	// rssOverhead is what kproxy's peak RSS may exceed
	// limits.max_buffered_bytes by while it serves one consumer of
	// records of any size: the Go runtime, the binary, connection
	// buffers and the object store client. Measured at about 36 MiB on
	// loopback (docs/large-messages.md, "Memory"); the bound leaves room.
	rssOverhead = 64 << 20
)

// TestConsumerOfHugeRecordsStaysWithinBudget: a 500 MiB record produced
// through kproxy (offloaded to SeaweedFS) is fetched by a franz-go
// consumer through a fresh kproxy process, byte-identical (SHA-256),
// while that process's peak RSS (VmHWM) stays under
// limits.max_buffered_bytes plus a constant; with a budget of 64 MiB,
// far below the record's size, too, so the bound does not come from the
// record fitting the budget.
func TestConsumerOfHugeRecordsStaysWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("produces and consumes a 500 MiB record")
	}
	store := seaweed.Start(t)
	creds, err := seaweed.Credentials().Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "media.video"))
	bin := testkit.SharedKproxy(t)
	start := func(maxFrame, maxBuffered int64) *testkit.Binary {
		extra := fmt.Sprintf("limits: {max_frame_bytes: %d, max_buffered_bytes: %d}\n", maxFrame, maxBuffered) +
			strings.ReplaceAll(section(`    - {match: "media.*", threshold_bytes: 1048576}`, ""), "ENDPOINT", store.Endpoint())
		text := testkit.Config{Upstream: cluster.ListenAddrs(), Admin: true, Log: "{level: info, format: json}", Extra: extra}.YAML()
		return testkit.RunBinary(t, bin, testkit.WriteConfig(t, text))
	}
	ctx := testkit.Context(t, 5*time.Minute)

	sent := value(500, hugeRecord)
	want := digest(sent)
	producer := start(hugeFrame, 600<<20)
	p := testkit.Client(t, kgo.SeedBrokers(producer.Bootstrap), kgo.ProducerBatchMaxBytes(hugeClientMax),
		kgo.BrokerMaxWriteBytes(hugeClientMax), kgo.ProduceRequestTimeout(2*time.Minute))
	if err := p.ProduceSync(ctx, &kgo.Record{Topic: "media.video", Key: []byte("film"), Value: sent}).FirstErr(); err != nil {
		t.Fatalf("produce %d bytes: %v", len(sent), err)
	}
	p.Close()
	sent = nil // the test's own memory is not kproxy's, but keep the machine's low
	if _, err := producer.Stop(); err != nil {
		t.Fatalf("the producing kproxy: %v", err)
	}

	// The producer's limits, and a budget far below the record's size
	// (fetching needs no large frame: the cluster sends the pointer).
	for _, lim := range []struct{ maxFrame, maxBuffered int64 }{{hugeFrame, 600 << 20}, {16 << 20, 64 << 20}} {
		maxBuffered := lim.maxBuffered
		t.Run(fmt.Sprintf("max_buffered_bytes=%dMiB", maxBuffered>>20), func(t *testing.T) {
			kp := start(lim.maxFrame, maxBuffered)
			c := testkit.Client(t, kgo.SeedBrokers(kp.Bootstrap), kgo.ConsumeTopics("media.video"),
				kgo.FetchMaxBytes(hugeClientMax), kgo.FetchMaxPartitionBytes(hugeClientMax), kgo.BrokerMaxReadBytes(hugeClientMax))
			got := testkit.Consume(t, ctx, c, 1)
			c.Close()
			if len(got[0].Value) != hugeRecord || digest(got[0].Value) != want {
				t.Fatalf("consumed %d bytes, not the %d sent (SHA-256 differs)", len(got[0].Value), hugeRecord)
			}
			got = nil
			hwm := kp.PeakRSS()
			if _, err := kp.Stop(); err != nil {
				t.Fatalf("the consuming kproxy: %v", err)
			}
			t.Logf("kproxy peak RSS %d MiB serving a %d MiB record with max_buffered_bytes %d MiB", hwm>>20, hugeRecord>>20, maxBuffered>>20)
			if limit := maxBuffered + rssOverhead; hwm > limit {
				t.Errorf("kproxy's peak RSS %d MiB exceeds max_buffered_bytes plus %d MiB (%d MiB)", hwm>>20, rssOverhead>>20, limit>>20)
			}
			if hwm > hugeRecord/4 { // within a large budget too: no copy of the value is held
				t.Errorf("kproxy's peak RSS %d MiB is that of holding the %d MiB record", hwm>>20, hugeRecord>>20)
			}
		})
	}
}
