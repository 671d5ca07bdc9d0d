package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/rewrite"
)

// Server is one kproxy instance: its listeners (a bootstrap port and one
// port per upstream node, and the SNI port) and the connection pairs they
// accept.
type Server struct {
	cfg        *config.Config
	log        zerolog.Logger
	metrics    *serverMetrics
	registerer prometheus.Registerer
	// observers see every request once its response is delivered; the
	// first is kproxy's own metrics (observe.go).
	observers []RequestObserver
	// sampler is the first observer that samples requests (observe.go).
	sampler RequestSampler
	// brokerErrors is each node's last upstream dial error, for /brokers.
	brokerErrors brokerErrors
	// runningConfig is what /config serves (WithRunningConfig).
	runningConfig func() *config.Config
	// closeLogs rate-limits the warnings of pairs closed for the same
	// reason (log.sample).
	closeLogs sampledLog
	// listeners are the kinds of listener the configuration asks for, in
	// the order they bind (listener.go); nodes are the upstream nodes the
	// cluster reported, where their pairs dial.
	listeners []listenerKind
	nodes     *nodeTable
	// health bounds how often kproxy dials an unreachable upstream, and
	// closes the listener of a node while its upstream is down.
	health *upstreamHealth
	// filters are the features WithFilters added. requestHandlers holds,
	// per API key, the handlers they and the built-in filters registered
	// (in Start); none means the frame is streamed. Each listener holds
	// its own response table the same way.
	filters []filter.Filter
	// boundary is the chain's stage next to the cluster (a name mapper
	// among the filters: stages.go); nil: none.
	boundary boundary
	// clusterOperator reports whether a connection's principal is one of
	// the virtual cluster's cluster operators (WithClusterOperators).
	clusterOperator func(*filter.Conn) bool
	requestHandlers handlerTable[filter.RequestHandler]
	rawStages       handlerTable[rawStage]
	chain           []filter.Link // the filters in request order (Chain)
	frames          framePool     // buffers of requests read whole for filters
	responseFrames  framePool     // buffers of large responses (responsebufs.go)
	// apiVersions answers ApiVersions of clients not yet authenticated
	// (SASL terminate mode); set in Start.
	apiVersions *apiVersionsCache
	budget      *memoryBudget
	// proxyHeaders reads load balancers' PROXY headers (listeners.proxy_protocol).
	proxyHeaders *proxyHeaders

	sec security
	// quotas enforces policy.quotas (quota.go; a quota engine among the
	// filters: stages.go); nil: none.
	quotas *quota.Engine
	// holder holds requests to a budget across both loops (quotas); nil:
	// none.
	holder responseHolder
	// sniRefused counts the SNI listener's refused handshakes.
	sniRefused *prometheus.CounterVec
	ready      atomic.Bool
	// connIDs numbers connections: the Server's own, or one shared by
	// every virtual cluster's (WithVirtualCluster), so that filter.Conn.ID
	// is unique in the process.
	connIDs *atomic.Uint64
	// virtualCluster is the name WithVirtualCluster set, "" for none.
	virtualCluster string

	mu    sync.Mutex
	pairs map[*pair]struct{}
	// open, handshakes and perIP count admitted connections, in their
	// handshake, and by address (admission.go).
	open       int
	handshakes int
	perIP      map[netip.Addr]int
	draining   bool
	wg         sync.WaitGroup // accept loops and pairs

	// stopDiscovery cancels the start-up metadata discovery, which closes
	// discoveryDone when it has returned; Shutdown waits for it so that
	// nothing runs (or logs, or marks the server ready) after Shutdown.
	stopDiscovery context.CancelFunc
	discoveryDone chan struct{}
	// failed receives the error that makes start-up impossible after Start
	// returned (a broker listener that cannot be bound): see Failed.
	failed chan error
}

// errNodeListener marks a node's listener that could not be opened.
var errNodeListener = errors.New("broker listener")

// Failed delivers, at most once, the error that stopped start-up after
// Start returned: the first metadata named a node whose listener cannot be
// bound (its port in use or not allowed). The caller should shut down and
// exit, as a broker whose port is taken does.
func (s *Server) Failed() <-chan error { return s.failed }

// New builds a Server from a validated configuration. Metrics are
// registered with reg. Nothing listens until Start.
func New(cfg *config.Config, log zerolog.Logger, reg prometheus.Registerer, opts ...Option) *Server {
	s := &Server{
		cfg:        cfg,
		log:        log,
		failed:     make(chan error, 1),
		metrics:    newServerMetrics(reg, metricsSettings{PrincipalLimit: cfg.Metrics.PrincipalLimit}),
		registerer: reg,
		// registered whether or not listeners.sni is set, so the metric
		// set does not depend on the configuration
		sniRefused: newSNIRefused(reg),
		pairs:      map[*pair]struct{}{},
		perIP:      map[netip.Addr]int{},
		closeLogs:  newSampledLog(cfg.Log.Sample),
		connIDs:    new(atomic.Uint64),
	}
	s.runningConfig = func() *config.Config { return cfg }
	s.observers = []RequestObserver{s.metrics.requests, &requestLog{log}}
	s.proxyHeaders = newProxyHeaders(cfg)
	s.budget = newMemoryBudget(cfg.Limits.MaxBufferedBytes, s.metrics.bufferedBytes, s.metrics.bufferedLimit)
	s.nodes = newNodeTable()
	if cfg.Listeners.PortPerBrokerEnabled() {
		s.listeners = append(s.listeners, newPortPerBroker(s))
	}
	if cfg.Listeners.SNI != nil {
		s.listeners = append(s.listeners, newSNIListener(s))
	}
	s.health = newUpstreamHealth(healthSettings{
		backoff:    cfg.Upstream.ReconnectBackoff,
		maxBackoff: cfg.Upstream.ReconnectBackoffMax,
		logEvery:   cfg.Log.Sample,
		probe:      s.probeUpstream,
		changed:    s.upstreamChanged,
	}, log, s.metrics)
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// Start binds every listener and starts serving it, then fetches
// upstream metadata in the background to open every node's listener and
// become ready. It returns once the listeners are bound.
func (s *Server) Start(ctx context.Context) error {
	if len(s.listeners) == 0 {
		return errors.New("listeners.port_per_broker: false leaves no listener: set listeners.sni too")
	}
	if err := s.setupSecurity(); err != nil {
		return err
	}
	if err := s.registerFilters(); err != nil {
		return fmt.Errorf("filters: %w", err)
	}
	for i, l := range s.listeners {
		if err := l.bind(); err != nil {
			for _, bound := range s.listeners[:i] {
				bound.close()
			}
			return err
		}
	}
	dctx, stop := context.WithCancel(ctx)
	s.stopDiscovery, s.discoveryDone = stop, make(chan struct{})
	s.apiVersions = newAPIVersionsCache(dctx)
	go s.refreshJWKS(dctx)
	for _, l := range s.listeners {
		l.serve()
	}
	s.probeBootstrapServers()
	go func() {
		defer close(s.discoveryDone)
		s.discoverBrokers(dctx)
		if s.sec.saslMode == config.SASLModeTerminate {
			s.warmAPIVersions(dctx)
		}
		s.refreshBrokers(dctx)
	}()
	return nil
}

// registerFilters builds the handler tables from every filter, in the
// order of the chain's phases (filter.Phase): requests from the client's
// side to the cluster's, responses back. It runs once, in Start, once the
// SASL mode is known.
//
// Each listener gets its own response table, registered the same way but
// with the rewriter mapping for that listener, so each hands out only its
// own addresses; the request handlers are the same in every registration.
func (s *Server) registerFilters() error {
	var reg *filter.Registry
	for _, l := range s.listeners {
		reg = s.registry(listenerMapper{s: s, l: l})
		*l.responses() = newResponseFilters(reg.Responses())
	}
	s.requestHandlers = buildHandlerTable(requestKey, reg.Requests())
	s.rawStages = buildHandlerTable(rawStageKey, rawStages())
	s.chain = append(rawStageLinks(rawStages()), reg.Chain()...)
	return reg.Err()
}

// registry adds every filter to one chain, each in its phase, with mapper
// as the address rewriter's.
func (s *Server) registry(mapper rewrite.BrokerMapper) *filter.Registry {
	var reg filter.Registry
	reg.Add(rewrite.Addresses{Mapper: mapper}, rewrite.APIVersionsClamp{})
	if s.sec.saslMode == config.SASLModeTerminate {
		reg.Add(filter.At(filter.PhaseNegotiate, saslVersions{}))
	}
	reg.Add(s.filters...)
	return &reg
}

// Ready reports whether listeners are bound and upstream metadata was seen.
func (s *Server) Ready() bool { return s.ready.Load() && s.listenersReady() }

// WaitReady blocks until the server is ready or ctx ends.
func (s *Server) WaitReady(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !s.Ready() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for kproxy readiness: %w", ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// serveListener accepts connections on ln, a port of listener via called
// name, for node nodeID (bootstrapNode: the bootstrap servers, or a node
// the connection's handshake names), until it is closed. Accept errors
// (file descriptors used up, say) are retried with backoff (accept.go):
// only closing ln ends the loop.
func (s *Server) serveListener(ln net.Listener, nodeID int32, name string, via listenerKind) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		accept := s.retryAccept(ln, name)
		for {
			conn, err := accept.Accept()
			if err != nil {
				return // ln was closed
			}
			a := s.admit(conn, name)
			if a == nil {
				continue
			}
			s.wg.Add(1) // under the accept loop's own count, so never after Shutdown's Wait returned
			go s.handle(conn, a, nodeID, name, via)
		}
	}()
}

// handle reads a PROXY header, if the listeners expect one, then serves
// conn as a pair. It runs on the connection's own goroutine so that a slow
// header holds up no other connection. Whatever way it ends, a's counts
// are released.
func (s *Server) handle(conn net.Conn, a *admission, nodeID int32, listener string, via listenerKind) {
	defer s.wg.Done()
	if conn = s.acceptProxyHeader(conn, a, listener); conn == nil {
		s.release(a)
		return
	}
	p := s.newPair(conn, a, nodeID, listener, via)
	if p == nil {
		s.release(a)
		return
	}
	p.run() // pairDone releases a
}

// newPair registers a pair for conn, admitted as a on the port called
// listener of via, or closes conn if kproxy is draining.
func (s *Server) newPair(conn net.Conn, a *admission, nodeID int32, listener string, via listenerKind) *pair {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		conn.Close()
		return nil
	}
	p := newPair(s, conn, nodeID, listener)
	p.admission, p.via = a, via
	s.pairs[p] = struct{}{}
	s.wg.Add(1)
	s.metrics.connsTotal.WithLabelValues(listener).Inc()
	return p
}

func (s *Server) pairDone(p *pair) {
	s.mu.Lock()
	delete(s.pairs, p)
	s.mu.Unlock()
	s.release(p.admission)
	s.wg.Done()
}

// Shutdown stops accepting, lets every pair finish the requests it already
// forwarded, and closes what is left when ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	pairs := make([]*pair, 0, len(s.pairs))
	for p := range s.pairs {
		pairs = append(pairs, p)
	}
	s.mu.Unlock()

	s.proxyHeaders.closeWaiting()
	s.health.close() // no more probes, so no listener reopens
	if s.stopDiscovery != nil {
		s.stopDiscovery()
		select {
		case <-s.discoveryDone:
		case <-ctx.Done():
		}
	}
	s.nodes.close()
	for _, l := range s.listeners {
		l.close()
	}
	s.ready.Store(false)
	s.metrics.ready.Set(0)
	for _, p := range pairs {
		p.drain()
	}

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		busy := 0
		for _, p := range pairs {
			select {
			case <-p.closed:
				continue // ended, finishing up
			default:
			}
			busy++
			p.close(fail("shutdown_timeout", errors.New("in-flight requests not answered within limits.shutdown_timeout")))
		}
		<-done
		return fmt.Errorf("shutdown: %d of %d connections still busy: %w", busy, len(pairs), ctx.Err())
	}
}
