package testkit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recordingTB captures Errorf calls so a test can assert that a check fails.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// fakeProxy claims addresses that no response will carry.
type fakeProxy struct{}

func (fakeProxy) BootstrapAddr() string { return "127.0.0.1:1" }
func (fakeProxy) BrokerAddr(id int32) (string, bool) {
	return fmt.Sprintf("127.0.0.1:%d", 2+id), true
}

// TestSnifferCatchesLeaks runs a client straight against kfake, with no
// kproxy in between, and checks that the sniffer reports the real broker
// addresses it was told: the check used by the e2e tests can fail.
func TestSnifferCatchesLeaks(t *testing.T) {
	c := Cluster(t, 3)
	s := NewSniffer()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()[0]), kgo.Dialer(s.Dial))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, req := range []kmsg.Request{
		kmsg.NewPtrMetadataRequest(),
		&kmsg.FindCoordinatorRequest{CoordinatorKeys: []string{"g"}, CoordinatorType: 0},
		kmsg.NewPtrDescribeClusterRequest(),
	} {
		if _, err := cl.Request(ctx, req); err != nil {
			t.Fatalf("%T: %v", req, err)
		}
	}
	if errs := s.Errors(); len(errs) > 0 {
		t.Fatalf("sniffer errors: %v", errs)
	}
	rec := &recordingTB{TB: t}
	s.CheckAddrs(rec, fakeProxy{}, c.ListenAddrs())
	all := strings.Join(rec.errs, "\n")
	for _, want := range []string{"dialed the upstream", "Metadata", "FindCoordinator", "DescribeCluster", "upstream address"} {
		if !strings.Contains(all, want) {
			t.Errorf("check did not report %q; it reported:\n%s", want, all)
		}
	}
	seen := map[string]bool{}
	for _, a := range s.Addrs() {
		seen[a.Addr] = true
	}
	for _, u := range c.ListenAddrs() {
		if !seen[u] {
			t.Errorf("sniffer did not record broker %s; saw %v", u, s.Addrs())
		}
	}
}
