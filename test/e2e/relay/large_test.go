package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestLargeRecords moves records of hundreds of KiB each way through kproxy:
// frames far larger than kproxy's 32 KiB buffers, which it streams (or
// splices between sockets) rather than holding whole. Every byte must
// arrive intact. With Kafka 2.6's protocol Fetch responses are not
// flexible and take the pure streaming path; with the latest they are
// inspected for leader endpoints.
func TestLargeRecords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []kgo.Opt
	}{
		{"latest", nil},
		{"kafka-2.6-versions", []kgo.Opt{kgo.MaxVersions(kversion.V2_6_0())}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const (
				topic = "large"
				n     = 24
			)
			ctx := testkit.Context(t, 60*time.Second)
			e := newEnv(t, "")
			e.createTopic(ctx, topic, 2)

			start := time.Now()
			rng := rand.New(rand.NewPCG(1, 2))
			want := map[string][]byte{}
			producer := e.client(append(tc.opts, kgo.DefaultProduceTopic(topic),
				kgo.ProducerBatchMaxBytes(1<<20))...)
			var recs []*kgo.Record
			for i := range n {
				v := make([]byte, 300<<10+rng.IntN(600<<10))
				for j := 0; j+8 <= len(v); j += 8 {
					binary.LittleEndian.PutUint64(v[j:], rng.Uint64())
				}
				k := fmt.Sprintf("big-%02d", i)
				want[k] = v
				recs = append(recs, &kgo.Record{Key: []byte(k), Value: v})
			}
			if err := producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}

			t.Logf("produced %v", time.Since(start))
			consumer := e.client(append(tc.opts, kgo.ConsumerGroup("large-"+tc.name), kgo.ConsumeTopics(topic),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.FetchMaxBytes(8<<20), kgo.FetchMaxPartitionBytes(4<<20))...)
			got := pollN(ctx, t, consumer, n)
			t.Logf("consumed %v", time.Since(start))
			seen := map[string]int{}
			for _, r := range got {
				k := string(r.Key)
				seen[k]++
				if w, ok := want[k]; !ok {
					t.Errorf("unexpected key %q", k)
				} else if !bytes.Equal(r.Value, w) {
					t.Errorf("%s: %d bytes consumed differ from the %d produced", k, len(r.Value), len(w))
				}
			}
			for k := range want {
				if seen[k] != 1 {
					t.Errorf("%s consumed %d times", k, seen[k])
				}
			}
			e.checkAddrs()
		})
	}
}
