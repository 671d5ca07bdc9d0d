package tenant_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/engine"
	"github.com/kproxy/kproxy/internal/tenant"
	"github.com/kproxy/kproxy/internal/testkit"
)

// changeAndHold changes every Produce request and keeps it for the
// response, where it stops until released: the name mapper then maps a
// copy of the changed request, the original staying with the hook.
type changeAndHold struct{ atHook, release chan struct{} }

func (f changeAndHold) Register(r *filter.Registry) {
	filter.OnRequest(r, func(*filter.Conn, *kmsg.ProduceRequest) filter.Verdict {
		return filter.Verdict{Modified: true, OnResponse: func(kmsg.Response) error {
			select {
			case f.atHook <- struct{}{}: // the first response only
			default:
			}
			<-f.release
			return nil
		}}
	})
}

// The copy of a changed request the name mapper maps is memory kproxy
// holds for the request: while the hook keeps the original, the budget
// (kproxy_buffered_bytes) counts both, the frame and the copy.
func TestMappedCopyIsChargedToTheBudget(t *testing.T) {
	const valueBytes = 400 << 10
	c := testkit.Cluster(t, 1, kfake.SeedTopics(1, "team-a.big"))
	hold := changeAndHold{atHook: make(chan struct{}, 1), release: make(chan struct{})}
	px := testkit.StartEngine(t, testkit.Engine{YAML: testkit.Config{Upstream: c.ListenAddrs()}.YAML(), Options: []engine.Option{engine.WithFilters(hold), engine.WithFilters(tenant.New(tenant.Names{Topic: "team-a."}))}})
	// Produce v12 names its topic, so the mapper rewrites it.
	cl := client(t, []string{px.BootstrapAddr()}, kgo.MaxVersions(kversion.V4_0_0()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DefaultProduceTopic("big"))
	ctx := testkit.Context(t, 30*time.Second)
	produced := make(chan error, 1)
	go func() {
		produced <- cl.ProduceSync(ctx, &kgo.Record{Value: bytes.Repeat([]byte("v"), valueBytes)}).FirstErr()
	}()
	select {
	case <-hold.atHook:
	case err := <-produced:
		t.Fatalf("produce returned before the hook ran: %v", err)
	case <-ctx.Done():
		t.Fatal("the hook never ran")
	}
	held := testkit.MetricValue(t, px.Registry, "kproxy_buffered_bytes")
	close(hold.release)
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if held < 2*valueBytes {
		t.Errorf("kproxy_buffered_bytes %.0f while the hook held the request, want at least %d: the frame and the mapper's copy", held, 2*valueBytes)
	}
}
