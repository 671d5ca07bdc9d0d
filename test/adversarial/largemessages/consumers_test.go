package largemessages

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/testkit/seaweed"
)

// Sizes of the many-consumers attack.
const (
	consumers   = 16
	largeValue  = 20 << 20 // streamed to consumers: above 4 MiB
	budget      = 4 << 20  // limits.max_buffered_bytes: a fifth of one value
	clientLimit = 32 << 20 // the consumers' fetch and read limits
	// rssOverhead is what kproxy may hold beyond the budget: the Go
	// runtime, the binary, the connections' buffers and the store client.
	rssOverhead = 64 << 20
)

// TestManyConsumersOfLargeValuesStayWithinBudget: sixteen consumers fetch
// a 20 MiB offloaded value at once, through a kproxy whose
// limits.max_buffered_bytes is 4 MiB: each receives it whole (SHA-256),
// kproxy's peak RSS stays under the budget plus a constant (holding the
// values would take 16 times 40 MiB), and a client producing and
// consuming small records on another topic meanwhile is served: every one
// of its round trips completes.
func TestManyConsumersOfLargeValuesStayWithinBudget(t *testing.T) {
	store := seaweed.Start(t)
	creds, err := seaweed.Credentials().Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	cluster := testkit.Cluster(t, 1, kfake.SeedTopics(1, "media.big", "plain.small"))
	start := func(maxFrame, maxBuffered int) *testkit.Binary {
		text := fmt.Sprintf(`upstream: {bootstrap_servers: [%q]}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
limits: {max_frame_bytes: %d, max_buffered_bytes: %d}
large_messages:
  store:
    s3: {endpoint: %q, bucket: %s, region: %s, path_style: true}
  topics: [{match: "media.*", threshold_bytes: 1048576}]
`, cluster.ListenAddrs()[0], maxFrame, maxBuffered, store.Endpoint(), seaweed.Bucket, seaweed.Region)
		return testkit.RunBinary(t, testkit.SharedKproxy(t), testkit.WriteConfig(t, text))
	}
	ctx := testkit.Context(t, 3*time.Minute)

	// The value goes in through a kproxy of its own, which reads the
	// produce request whole; the consumers' kproxy takes 1 MiB frames.
	sent := bytes.Repeat([]byte("0123456789abcdef"), largeValue/16)
	sent[12345] = 'x' // a value no shorter pattern reproduces by chance
	want := sha256.Sum256(sent)
	in := start(clientLimit, clientLimit)
	producer := testkit.Client(t, kgo.SeedBrokers(in.Bootstrap), kgo.ProducerBatchMaxBytes(clientLimit), kgo.BrokerMaxWriteBytes(clientLimit))
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "media.big", Key: []byte("big"), Value: sent}).FirstErr(); err != nil {
		t.Fatalf("produce the %d MiB value: %v", largeValue>>20, err)
	}
	kp := start(1<<20, budget)

	var wg sync.WaitGroup
	results := make(chan error, consumers)
	for i := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := testkit.Client(t, kgo.SeedBrokers(kp.Bootstrap), kgo.ConsumeTopics("media.big"), kgo.ClientID(fmt.Sprintf("large-%d", i)),
				kgo.FetchMaxBytes(clientLimit), kgo.FetchMaxPartitionBytes(clientLimit), kgo.BrokerMaxReadBytes(clientLimit+(1<<20)))
			defer c.Close()
			for {
				fs := c.PollFetches(ctx)
				if err := ctx.Err(); err != nil {
					results <- fmt.Errorf("consumer %d: %w", i, err)
					return
				}
				var ferr error
				fs.EachError(func(_ string, _ int32, err error) { ferr = err })
				if ferr != nil {
					results <- fmt.Errorf("consumer %d: %w", i, ferr)
					return
				}
				if rs := fs.Records(); len(rs) > 0 {
					if sha256.Sum256(rs[0].Value) != want {
						results <- fmt.Errorf("consumer %d: %d bytes, not the value sent", i, len(rs[0].Value))
						return
					}
					results <- nil
					return
				}
			}
		}()
	}

	// Meanwhile, small records on another topic, one round trip at a time.
	small := testkit.Client(t, kgo.SeedBrokers(kp.Bootstrap), kgo.ConsumeTopics("plain.small"), kgo.FetchMaxWait(100*time.Millisecond))
	var slowest time.Duration
	for i := range 20 {
		start := time.Now()
		if err := small.ProduceSync(ctx, &kgo.Record{Topic: "plain.small", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("small produce %d while the large values stream: %v", i, err)
		}
		for got := false; !got; {
			fs := small.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("small record %d not consumed while the large values stream: %v", i, ctx.Err())
			}
			got = len(fs.Records()) > 0
		}
		slowest = max(slowest, time.Since(start))
	}
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil {
			t.Error(err)
		}
	}
	hwm := kp.PeakRSS()
	t.Logf("%d consumers of a %d MiB value, max_buffered_bytes %d MiB: kproxy peak RSS %d MiB; slowest small round trip %v",
		consumers, largeValue>>20, budget>>20, hwm>>20, slowest)
	if limit := int64(budget + rssOverhead); hwm > limit {
		t.Errorf("kproxy's peak RSS %d MiB exceeds max_buffered_bytes plus %d MiB (%d MiB)", hwm>>20, rssOverhead>>20, limit>>20)
	}
}
