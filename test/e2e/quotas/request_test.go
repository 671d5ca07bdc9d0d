package e2equotas

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// requestPolicy: dave may use 0.005% of one thread's time (50 µs a
// second) of kproxy's connection loops, which any client sending requests
// back to back exceeds however slow the machine; erin's produce quota is tiny, for a client
// too old to throttle itself.
const requestPolicy = `
policy:
  default: allow
  quotas:
    - {name: dave-requests, principals: ["User:dave"], request_percentage: 0.005}
    - {name: old-client, principals: ["client_id:old-client"], produce_bytes_per_second: 150}
`

// TestRequestPercentage: a client sending requests back to back spends
// more than 0.005% of a thread's time in kproxy and is throttled by the
// request quota (franz-go's hook reports it, the metric counts it), and
// no request fails.
func TestRequestPercentage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"dave.t"}, requestPolicy)
	hook := &throttleHook{}
	cl := e.client("dave", kgo.DefaultProduceTopic("dave.t"), kgo.WithHooks(hook), kgo.ProducerLinger(0))
	ctx := testkit.Context(t, 30*time.Second)
	var requests int
	for start := time.Now(); time.Since(start) < 3*time.Second; requests++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("small")}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", requests, err)
		}
	}
	if hook.count.Load() == 0 {
		t.Errorf("%d produce requests in 3 s: franz-go reported no throttle under request_percentage 0.005", requests)
	}
	if n := testkit.MetricValue(t, e.reg, "kproxy_quota_throttled_requests_total", "quota", "dave-requests", "kind", "request"); n == 0 {
		t.Error("no request counted as throttled by the request quota")
	}
	t.Logf("%d requests, %v", requests, hook)
}

// TestThrottleDelaysOldClients: a client older than KIP-219 (Produce v5)
// does not back off by itself, so, as a broker, kproxy delays the
// response by the throttle time; the response still carries it.
func TestThrottleDelaysOldClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"old.t"}, requestPolicy)
	raw := e.rawAs("erin", "old-client")
	req := testkit.ProduceByName(5, 1, testkit.RecordBatch(strings.Repeat("v", 1500)), "old.t")
	req.TimeoutMillis = 5000
	start := time.Now()
	resp, err := raw.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	throttle := time.Duration(resp.(*kmsg.ProduceResponse).ThrottleMillis) * time.Millisecond
	// About 1.6 kB against 150 B/s over the 10 s a new rate is measured
	// over: (160 - 150)/150 × 10 s, more than half a second.
	if throttle < 300*time.Millisecond {
		t.Fatalf("throttle_time_ms %v, want more than half a second", throttle)
	}
	if took < throttle-50*time.Millisecond {
		t.Errorf("a Produce v5 response with throttle %v came after %v: it must be delayed by the throttle time", throttle, took)
	}
}
