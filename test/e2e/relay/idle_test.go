package e2e

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
)

// TestIdleTimeout: limits.idle_timeout closes a connection that carries no
// traffic, but not one whose request is still being answered (a fetch long
// poll longer than the idle timeout).
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	const (
		topic = "idle"
		idle  = time.Second
		poll  = 2500 * time.Millisecond
	)
	e := newEnv(t, "limits: {idle_timeout: 1s}")
	ctx := testkit.Context(t, 30*time.Second)
	e.createTopic(ctx, topic, 1)
	addr := mustBrokerAddr(t, e, e.cluster.LeaderFor(topic, 0))

	// An idle connection is closed, after about the idle timeout.
	quiet := dialRaw(t, addr)
	quiet.Versions(t)
	took := expectClosed(t, quiet, idle+3*time.Second)
	t.Logf("idle connection closed after %v", took)
	if took < idle/2 {
		t.Errorf("idle connection closed after %v, before the %v idle timeout", took, idle)
	}

	// A long poll outlasting the idle timeout is answered, and the
	// connection stays usable.
	c := dialRaw(t, addr)
	v := c.Versions(t)
	fetch := testkit.FetchByName(min(v[int16(kmsg.Fetch)], 12), topic) // by topic name
	fetch.MaxWaitMillis = int32(poll / time.Millisecond)
	fetch.MinBytes = 1
	start := time.Now()
	resp := c.MustRoundTrip(t, fetch).(*kmsg.FetchResponse)
	waited := time.Since(start)
	t.Logf("long poll answered after %v", waited)
	if ec := resp.Topics[0].Partitions[0].ErrorCode; ec != 0 {
		t.Errorf("fetch error code %d", ec)
	}
	if waited < poll-500*time.Millisecond {
		t.Errorf("fetch answered after %v: not a long poll beyond the %v idle timeout", waited, idle)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(v[int16(kmsg.Metadata)])
	c.MustRoundTrip(t, md) // still open
}
