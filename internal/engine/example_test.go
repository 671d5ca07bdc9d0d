package engine_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/engine"
)

// slowRequests counts requests whose upstream part took over a second.
// ObserveRequest runs on the data path, so it only adds to a counter.
type slowRequests struct{ n atomic.Int64 }

func (s *slowRequests) ObserveRequest(t *engine.RequestTiming) {
	if t.Upstream() > time.Second {
		s.n.Add(1)
	}
}

// Example runs one engine in front of a cluster and watches every
// request's timing, then drains on the way out.
func Example() {
	cfg, err := config.Parse(strings.NewReader("upstream:\n  bootstrap_servers: [kafka-0:9092]\n"))
	if err != nil {
		panic(err)
	}
	slow := &slowRequests{}
	srv := engine.New(cfg, zerolog.New(os.Stderr), prometheus.NewRegistry(), engine.WithRequestObservers(slow))
	ctx := context.Background()
	if err := srv.Start(ctx); err != nil {
		panic(err)
	}
	defer srv.Shutdown(ctx)
	if err := srv.WaitReady(ctx); err != nil {
		panic(err)
	}
	// Clients bootstrap from srv.BootstrapAddr().
}
