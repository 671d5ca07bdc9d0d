package e2e

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// limitsEnv is newEnv(t, extraYAML) with a one-partition topic and a
// normal client, checked healthy before the test's abuse.
func limitsEnv(t *testing.T, extraYAML, topic string) (*env, *kgo.Client) {
	t.Helper()
	e := newEnv(t, extraYAML)
	e.createTopic(testkit.Context(t, 30*time.Second), topic, 1)
	other := e.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	healthy(t, e, other, topic, "before")
	return e, other
}

// healthy checks that a normal client works through kproxy: a produce and
// a consume of the same record.
func healthy(t *testing.T, e *env, cl *kgo.Client, topic, val string) {
	t.Helper()
	ctx := testkit.Context(t, 20*time.Second)
	r := &kgo.Record{Topic: topic, Value: []byte(val)}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatalf("produce through kproxy: %v", err)
	}
	got := e.consumeValues(ctx, topic, r.Partition, int(r.Offset)+1)
	if got[r.Offset] != val {
		t.Fatalf("consumed %q at offset %d, want %q", got[r.Offset], r.Offset, val)
	}
}

// TestOversizedFrameClosesConnection: a request whose size prefix exceeds
// limits.max_frame_bytes makes kproxy close that connection at once, before
// any body arrives, while other clients keep working.
func TestOversizedFrameClosesConnection(t *testing.T) {
	t.Parallel()
	const topic = "limits"
	e, other := limitsEnv(t, "limits: {max_frame_bytes: 1048576}", topic)

	for _, addr := range []string{e.proxy.BootstrapAddr(), mustBrokerAddr(t, e, 0)} {
		c := dialRaw(t, addr)
		// A valid ApiVersions header, but a size prefix of 2 MiB: the body
		// never comes, so only the prefix can trigger the close.
		req := kmsg.NewPtrApiVersionsRequest()
		f, _ := c.Frame(req)
		binary.BigEndian.PutUint32(f, 2<<20)
		if _, err := c.Write(f); err != nil {
			t.Fatalf("write: %v", err)
		}
		took := expectClosed(t, c, 3*time.Second)
		t.Logf("%s: closed after %v", addr, took)
	}
	if n := testkit.MetricValue(t, e.proxy.Registry, "kproxy_connections_closed_total", "reason", "protocol_error"); n != 2 {
		t.Errorf("kproxy_connections_closed_total{reason=protocol_error} = %v, want 2", n)
	}

	// A frame just under the limit is not refused for its size: a 1000
	// KiB produce is forwarded and answered.
	c := dialRaw(t, mustBrokerAddr(t, e, e.cluster.LeaderFor(topic, 0)))
	v := c.Versions(t)
	big := make([]byte, 1000<<10)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	pr := produceRequest(min(v[int16(kmsg.Produce)], 12), 1, topic, 0, string(big))
	resp := c.MustRoundTrip(t, pr).(*kmsg.ProduceResponse)
	if ec := resp.Topics[0].Partitions[0].ErrorCode; ec != 0 {
		t.Errorf("produce of a frame under the limit: error %d", ec)
	}

	healthy(t, e, other, topic, "after")
}

// TestUnknownAPIKeyClosesConnection: a request with an API key kproxy does
// not know (30000) closes that connection; the cluster behind is unharmed
// and keeps serving a normal client.
func TestUnknownAPIKeyClosesConnection(t *testing.T) {
	t.Parallel()
	const topic = "unknown-key"
	e, other := limitsEnv(t, "", topic)

	for _, addr := range []string{e.proxy.BootstrapAddr(), mustBrokerAddr(t, e, e.cluster.LeaderFor(topic, 0))} {
		c := dialRaw(t, addr)
		c.Versions(t) // a normal exchange first: the connection is live upstream
		var body []byte
		body = wire.AppendRequestHeader(body, protocol.RequestHeader{
			APIKey: 30000, APIVersion: 0, CorrelationID: 99, ClientID: "e2e-raw",
		})
		body = append(body, 1, 2, 3, 4)
		frame := protocol.AppendFrameSize(nil, len(body))
		if _, err := c.Write(append(frame, body...)); err != nil {
			t.Fatalf("write: %v", err)
		}
		took := expectClosed(t, c, 3*time.Second)
		t.Logf("%s: closed after %v", addr, took)
	}
	if n := testkit.MetricValue(t, e.proxy.Registry, "kproxy_connections_closed_total", "reason", "protocol_error"); n != 2 {
		t.Errorf("kproxy_connections_closed_total{reason=protocol_error} = %v, want 2", n)
	}

	healthy(t, e, other, topic, "after")
	// And a brand-new client too.
	healthy(t, e, e.client(kgo.RecordPartitioner(kgo.ManualPartitioner())), topic, "new client")
}

func mustBrokerAddr(t *testing.T, e *env, node int32) string {
	t.Helper()
	a, ok := e.proxy.BrokerAddr(node)
	if !ok {
		t.Fatalf("kproxy has no listener for node %d", node)
	}
	return a
}
