package greedy

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/test/adversarial/advkit"
)

// quotaRate is the fetch quota every test holds its client to, the
// finding's 1 MB/s. The windows are Kafka's eleven, of 100 ms rather
// than the broker's 1 s: with 1 s windows a first burst may take ten
// seconds of quota at once, which no 20 s measurement could average out
// (docs/quotas.md, "Measuring a rate over a short run").
const quotaRate = 1_000_000

// quotaFetchBytes bounds each fetch response: a tenth of a second of
// quota, well under the 1.1 s of quota the windows measure.
const quotaFetchBytes = 100_000

// quotaValueSize is each seeded record's value, incompressible.
const quotaValueSize = 16 << 10

// quotaMeasureFor is how long each client runs (the finding's 20 s; a
// short run under the race detector, which checks the upper bound only:
// quotaCheckRate).
func quotaMeasureFor() time.Duration {
	if quotaRaceEnabled {
		return 5 * time.Second
	}
	return 20 * time.Second
}

// quotaConfig is kproxy in front of upstreams holding client id clientID
// to a fetch quota of rate bytes per second.
func quotaConfig(upstreams []string, clientID string, rate int) string {
	return fmt.Sprintf(`
upstream: {bootstrap_servers: ["%s"]}
listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0}
admin: {listen: "127.0.0.1:0"}
log: {level: info, format: json}
policy:
  quota_windows: {samples: 11, size: 100ms}
  quotas:
    - {name: greedy, principals: ["client_id:%s"], fetch_bytes_per_second: %d}
`, strings.Join(upstreams, `", "`), clientID, rate)
}

// quotaStart runs the real kproxy from cfg. Nothing here reads its log: it is drained, so that its lines
// (one per connection, and the attacks open many) never back up into
// kproxy's stdout.
func quotaStart(t *testing.T, cfg string) *testkit.Binary {
	t.Helper()
	kp := advkit.Start(t, cfg)
	go func() {
		for {
			if _, ok := kp.Next(time.Hour); !ok {
				return
			}
		}
	}()
	return kp
}

// quotaTarget is a one-broker kfake holding topic (partitions
// partitions, each seeded with perPartition bytes of records) and the
// real kproxy in front of it holding clientID to the fetch quota; it
// returns kproxy's bootstrap address (whose connections reach the one
// broker, the leader of every partition).
func quotaTarget(t *testing.T, clientID, topic string, partitions int32, perPartition int) string {
	t.Helper()
	upstream := advkit.Kfake(t, 1)[0]
	direct, err := kgo.NewClient(kgo.SeedBrokers(upstream), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	ctx := testkit.Context(t, 60*time.Second)
	if _, err := kadm.NewClient(direct).CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	value := make([]byte, quotaValueSize)
	rand.Read(value)
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < perPartition/quotaValueSize; i++ {
			direct.Produce(ctx, &kgo.Record{Value: value, Partition: p}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("seed %s/%d: %v", topic, p, err)
				}
			})
		}
	}
	if err := direct.Flush(ctx); err != nil {
		t.Fatalf("seed %s: %v", topic, err)
	}
	return quotaStart(t, quotaConfig([]string{upstream}, clientID, quotaRate)).Bootstrap
}

// quotaFetch is a sessionless fetch (v12: topics by name, a client that
// backs off by itself, KIP-219) of partition 0 of topic from offset 0, of
// at most quotaFetchBytes.
func quotaFetch(topic string) *kmsg.FetchRequest {
	req := testkit.FetchByName(12, topic)
	req.MaxBytes, req.Topics[0].Partitions[0].PartitionMaxBytes = quotaFetchBytes, quotaFetchBytes
	return req
}

// quotaTally counts what an attacker got: bytes of responses that carried
// records (what the quota counts: the response frame's size) and the
// empty, throttled answers.
type quotaTally struct {
	delivered atomic.Int64
	responses atomic.Int64
	throttled atomic.Int64
}

// note counts the response frame (size prefix excluded) to fetch.
func (q *quotaTally) note(t *testing.T, frame []byte, resp *kmsg.FetchResponse) {
	records := 0
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if p.ErrorCode != 0 {
				t.Errorf("fetch answered partition %d error %d", p.Partition, p.ErrorCode)
			}
			records += len(p.RecordBatches)
		}
	}
	switch {
	case resp.ErrorCode != 0:
		t.Errorf("fetch answered error %d", resp.ErrorCode)
	case records > 0:
		q.delivered.Add(int64(len(frame) + 4))
		q.responses.Add(1)
	case resp.ThrottleMillis > 0 && len(resp.Topics) == 0:
		q.throttled.Add(1) // as a broker answers a throttled fetch
	default:
		t.Errorf("fetch answered with no records, no throttle: %+v", resp)
	}
}

// fetch sends req on c, reads the answer and notes it.
func (q *quotaTally) fetch(t *testing.T, c *testkit.RawConn, req *kmsg.FetchRequest) error {
	corr, err := c.Send(req)
	if err != nil {
		return err
	}
	frame, resp, err := c.Receive(req, corr)
	if err != nil {
		return err
	}
	q.note(t, frame, resp.(*kmsg.FetchResponse))
	return nil
}

// check fails unless what the attacker got over d is within ±10% of the
// quota.
func (q *quotaTally) check(t *testing.T, what string, d time.Duration) {
	t.Helper()
	t.Logf("%s: %d responses with records, %d throttled empty answers", what, q.responses.Load(), q.throttled.Load())
	quotaCheckRate(t, what, float64(q.delivered.Load()), d)
}

// quotaFirstBurst is what a sampled rate lets through at once before the
// first throttle: (samples-1) windows of quota, one second's here.
const quotaFirstBurst = quotaRate * 1.0

// quotaCheckRate fails unless bytes over d are the quota ±10%. Under the
// race detector (a 5 s run, which may not reach the quota) only the upper
// bound is checked, the first burst allowed on top (a fifth of 5 s).
func quotaCheckRate(t *testing.T, what string, bytes float64, d time.Duration) {
	t.Helper()
	rate := bytes / d.Seconds()
	t.Logf("%s: %.3f MB/s over %v (quota %.3f MB/s)", what, rate/1e6, d.Round(time.Millisecond), quotaRate/1e6)
	if quotaRaceEnabled {
		if most := 1.1 * (quotaRate*d.Seconds() + quotaFirstBurst); bytes > most {
			t.Errorf("%s: %.3f MB in %v, want at most %.3f MB (the quota and its first burst, +10%%)", what, bytes/1e6, d, most/1e6)
		}
		return
	}
	if rate > 1.1*quotaRate || rate < 0.9*quotaRate {
		t.Errorf("%s: %.3f MB/s, want the quota %.3f MB/s ±10%%", what, rate/1e6, quotaRate/1e6)
	}
}

// quotaDial connects to addr as clientID. Its close resets the
// connection (no TIME_WAIT): an attacker opens thousands.
func quotaDial(t *testing.T, addr, clientID string) *testkit.RawConn {
	c := testkit.DialRaw(t, addr, clientID)
	c.Conn.(*net.TCPConn).SetLinger(0)
	return c
}

// quotaUntil runs attack until d has passed or ctx ends.
func quotaUntil(ctx context.Context, d time.Duration, attack func() bool) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil && attack() {
	}
}
