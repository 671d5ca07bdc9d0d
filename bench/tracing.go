package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
)

// tracedRatio is the kproxy-traced target's sampling ratio: the rate the
// overhead budget is stated for.
const tracedRatio = 0.01

// traceSink is an OTLP/HTTP endpoint that accepts and discards spans, so
// the kproxy-traced target exports for real without a collector; its CPU
// is the bench process's, not kproxy's.
type traceSink struct {
	srv      *http.Server
	addr     string
	requests atomic.Int64
}

func startTraceSink() (*traceSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("trace sink: %w", err)
	}
	s := &traceSink{addr: ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.requests.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK) // an empty ExportTraceServiceResponse
	})}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *traceSink) close() { s.srv.Close() }

// startKproxyTraced starts kproxy with tracing on at tracedRatio, its
// spans going to a sink that lives as long as the runner's targets.
func (r *runner) startKproxyTraced(ctx context.Context) (*target, error) {
	if r.traceSink == nil {
		sink, err := startTraceSink()
		if err != nil {
			return nil, err
		}
		r.traceSink = sink
	}
	extra := fmt.Sprintf("tracing: {enabled: true, endpoint: \"http://%s\", ratio: %g}\n", r.traceSink.addr, tracedRatio)
	t, err := startKproxy(ctx, &r.o, r.up, TargetKproxyTraced, r.kproxy, extra, nil, r.workDir)
	if t != nil {
		t.desc = fmt.Sprintf("kproxy process, passthrough, tracing at %g%% sampling (OTLP/HTTP to a sink in the bench process)", tracedRatio*100)
	}
	return t, err
}
