package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/upstreamclient"
)

// bootstrapHeadStart is how long a bootstrap dial has to answer before the
// next bootstrap server is dialed alongside it (RFC 8305's connection
// attempt delay), so that a server that drops packets costs a client this
// much, not upstream.dial_timeout.
const bootstrapHeadStart = 250 * time.Millisecond

// dialUpstream connects to the upstream that serves nodeID: the node's
// advertised address, or for the bootstrap listener a reachable bootstrap
// server. An upstream known down is not dialed: the error says so at once
// (see upstreamHealth).
func (s *Server) dialUpstream(ctx context.Context, nodeID int32) (net.Conn, error) {
	if nodeID == bootstrapNode {
		return s.dialBootstrap(ctx)
	}
	addr, ok := s.nodes.upstreamFor(nodeID)
	if !ok {
		return nil, fmt.Errorf("node %d: upstream address not known yet", nodeID)
	}
	conn, err := s.dialTracked(ctx, addr, nodeID)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", nodeID, err)
	}
	return conn, nil
}

// openUpstream opens a connection for clients' requests (or kproxy's own)
// to the upstream that serves nodeID: dialUpstream, then, with
// upstream.sasl, kproxy's own login. Every upstream connection kproxy
// sends requests on is opened here.
func (s *Server) openUpstream(ctx context.Context, nodeID int32) (net.Conn, upstreamLogin, error) {
	conn, err := s.dialUpstream(ctx, nodeID)
	if err != nil {
		return nil, upstreamLogin{}, err
	}
	login := upstreamLogin{began: time.Now()}
	if s.sec.upstreamMech != nil {
		if login.session, err = auth.AuthenticateConn(ctx, conn, s.sec.upstreamMech, "kproxy"); err != nil {
			conn.Close()
			return nil, upstreamLogin{}, fmt.Errorf("upstream SASL: %w", err)
		}
	}
	return conn, login, nil
}

// dialTracked dials addr for nodeID unless its health says it is down, and
// records the outcome there.
func (s *Server) dialTracked(ctx context.Context, addr string, nodeID int32) (net.Conn, error) {
	if err := s.health.admit(addr); err != nil {
		return nil, err
	}
	conn, err := s.dialOne(ctx, addr, nodeID)
	s.brokerErrors.record(nodeID, err)
	if err = s.health.record(addr, nodeID, err); err != nil {
		return nil, err
	}
	return conn, nil
}

// dialResult is one bootstrap dial's outcome.
type dialResult struct {
	conn net.Conn
	err  error
}

// dialBootstrap connects to a bootstrap server. Servers known down are
// skipped, and slow ones tried last; each dial gets bootstrapHeadStart to
// answer before the next server is dialed alongside it, and the first to
// connect wins. Dials that lose run on until they finish, so that their
// outcome is recorded (a server that never answers is then known down and
// skipped), and their connections are closed.
func (s *Server) dialBootstrap(ctx context.Context) (net.Conn, error) {
	addrs := s.health.order(s.cfg.Upstream.BootstrapServers)
	if len(addrs) == 0 {
		return nil, reportedError{fmt.Errorf("no bootstrap server reachable: all %d are down and in backoff",
			len(s.cfg.Upstream.BootstrapServers))}
	}
	results := make(chan dialResult, len(addrs))
	started := 0
	start := func() bool {
		addr := addrs[started]
		ok := s.health.goBackground(func(hctx context.Context) {
			dctx, cancel := context.WithTimeout(hctx, s.cfg.Upstream.DialTimeout)
			defer cancel()
			conn, err := s.dialTracked(dctx, addr, bootstrapNode)
			results <- dialResult{conn, err}
		})
		if ok {
			started++
		}
		return ok
	}
	if !start() {
		return nil, errDraining
	}
	headStart := time.NewTimer(bootstrapHeadStart)
	defer headStart.Stop()
	var errs []error
	for answered := 0; answered < started; {
		select {
		case r := <-results:
			answered++
			if r.err == nil {
				go closeLosers(results, started-answered)
				return r.conn, nil
			}
			errs = append(errs, r.err)
			if started < len(addrs) && start() {
				headStart.Reset(bootstrapHeadStart)
			}
		case <-headStart.C:
			if started < len(addrs) {
				s.health.markSlow(addrs[started-1])
				if start() {
					headStart.Reset(bootstrapHeadStart)
				}
			}
		case <-ctx.Done():
			go closeLosers(results, started-answered)
			return nil, fmt.Errorf("no bootstrap server answered: %w", errors.Join(append(errs, ctx.Err())...))
		}
	}
	err := fmt.Errorf("no bootstrap server reachable: %w", errors.Join(errs...))
	if len(errs) > 0 && healthReported(errs[0]) {
		err = reportedError{err}
	}
	return nil, err
}

// closeLosers closes the connections of the n bootstrap dials still
// running when another one won.
func closeLosers(results <-chan dialResult, n int) {
	for range n {
		if r := <-results; r.conn != nil {
			r.conn.Close()
		}
	}
}

// probeUpstream dials addr, where nodeID is served, once to see whether
// it is back.
func (s *Server) probeUpstream(ctx context.Context, addr string, nodeID int32) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Upstream.DialTimeout)
	defer cancel()
	conn, err := s.dialOne(ctx, addr, nodeID)
	if err != nil {
		return err
	}
	return conn.Close()
}

// upstreamChanged is told by the health tracker that addr went down or
// came back: every listener follows (the port of a node served there, and
// the bootstrap port if addr is a bootstrap server).
func (s *Server) upstreamChanged(addr string) {
	for _, l := range s.listeners {
		l.upstreamChanged(addr)
	}
}

// dialOne connects to addr, where nodeID is served, and secures the
// connection as configured. Every attempt, a health probe's too, counts
// in nodeID's dial metrics, so that their sum covers all upstream dials.
func (s *Server) dialOne(ctx context.Context, addr string, nodeID int32) (net.Conn, error) {
	node := s.metrics.upstream.node(nodeID)
	node.dials.Inc()
	conn, err := dialWaitingForDescriptors(ctx, addr)
	if err == nil {
		deadline, _ := ctx.Deadline()
		var secured net.Conn
		if secured, err = s.secureUpstream(conn, addr, deadline); err == nil {
			return secured, nil
		}
		conn.Close()
	}
	if !errors.Is(err, context.Canceled) {
		node.failures.Inc()
	}
	return nil, fmt.Errorf("dial upstream %s: %w", addr, err)
}

// discoverBrokers fetches cluster metadata until it succeeds, opening a
// listener for every broker, then marks the server ready. Until then
// /readyz fails, but the bootstrap listener already serves clients.
func (s *Server) discoverBrokers(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for {
		err := s.fetchBrokers(ctx)
		if err == nil {
			s.ready.Store(true)
			s.metrics.ready.Set(1)
			s.log.Info().Int("brokers", s.nodes.count()).Msg("upstream metadata fetched; ready")
			return
		}
		if ctx.Err() != nil {
			return // stopped (Shutdown): not an upstream problem
		}
		if errors.Is(err, errNodeListener) {
			// Not the upstream's fault, and retrying will not free the
			// port: start-up has failed.
			s.failed <- err
			return
		}
		s.log.Warn().Err(err).Str("retry_in", durationText(backoff)).Msg("upstream metadata not available yet")
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (s *Server) fetchBrokers(ctx context.Context) error {
	if s.sec.saslMode == config.SASLModePassthrough && s.sec.upstreamMech == nil {
		// Only clients hold credentials: kproxy cannot ask for metadata, so
		// it checks the upstream answers and opens each broker's listener
		// when a client's metadata first names it.
		dctx, cancel := context.WithTimeout(ctx, s.cfg.Upstream.DialTimeout)
		defer cancel()
		conn, err := s.dialUpstream(dctx, bootstrapNode)
		if err != nil {
			return err
		}
		return conn.Close()
	}
	up := upstreamclient.Security{TLS: s.sec.upstreamTLS, SASL: s.sec.upstreamMech}
	cl, err := kgo.NewClient(up.ClientOpts(s.cfg.Upstream.BootstrapServers, s.cfg.Upstream.DialTimeout)...)
	if err != nil {
		return fmt.Errorf("upstream metadata client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Upstream.DialTimeout+5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // brokers only
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("upstream metadata: %w", err)
	}
	for _, b := range resp.Brokers {
		if err := s.nodeSeen(b.NodeID, b.Host, b.Port); err != nil {
			return err
		}
	}
	return nil
}
