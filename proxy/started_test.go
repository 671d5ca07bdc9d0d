package proxy_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/testkit"
	"github.com/kproxy/kproxy/proxy"
)

// TestStartedNamesTheChosenPorts: with every port left to the system,
// Options.Started tells the program where kproxy listens: its bootstrap
// listener answers a Kafka client, its broker addresses are the ones it
// hands out, its admin endpoint serves /readyz, and its metrics are those
// the endpoint serves; Ready follows kproxy's readiness.
func TestStartedNamesTheChosenPorts(t *testing.T) {
	cluster := testkit.Cluster(t, 2)
	path := testkit.WriteConfig(t, testkit.Config{Upstream: cluster.ListenAddrs(), Admin: true}.YAML())
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan proxy.Started, 1)
	done := make(chan error, 1)
	go func() {
		done <- proxy.Run(ctx, proxy.Options{ConfigPath: path, LogOutput: io.Discard, Started: func(s proxy.Started) { started <- s }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	})
	var s proxy.Started
	select {
	case s = <-started:
	case err := <-done:
		t.Fatalf("Run returned before Started: %v", err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	if err := s.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	if !s.Ready() {
		t.Fatal("Ready is false after WaitReady returned")
	}

	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	resp := testkit.DialRaw(t, s.BootstrapAddr(), "started").MustRoundTrip(t, md).(*kmsg.MetadataResponse)
	if len(resp.Brokers) != 2 {
		t.Fatalf("metadata through %s lists %d brokers, want 2", s.BootstrapAddr(), len(resp.Brokers))
	}
	for _, b := range resp.Brokers {
		addr, ok := s.BrokerAddr(b.NodeID)
		if want := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); !ok || addr != want {
			t.Errorf("BrokerAddr(%d) = %q, %t; metadata hands out %s", b.NodeID, addr, ok, want)
		}
	}
	if status, body := testkit.HTTPGet(t, "http://"+s.AdminAddr()+"/readyz"); status != http.StatusOK {
		t.Errorf("/readyz at AdminAddr %s: %d %s", s.AdminAddr(), status, body)
	}
	if n := testkit.MetricValue(t, s.Metrics(), "kproxy_ready"); n != 1 {
		t.Errorf("kproxy_ready gathered from Metrics = %v, want 1", n)
	}
	if s.SNIAddr() != "" {
		t.Errorf("SNIAddr = %q without listeners.sni", s.SNIAddr())
	}
}
