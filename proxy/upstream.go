package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/config"
)

// dialUpstream connects to the upstream that serves nodeID: the node's
// advertised address, or for the bootstrap listener the first reachable
// bootstrap server.
func (s *Server) dialUpstream(ctx context.Context, nodeID int32) (net.Conn, error) {
	d := net.Dialer{Timeout: s.cfg.Upstream.DialTimeout, KeepAlive: 30 * time.Second}
	if nodeID != bootstrapNode {
		addr, ok := s.routes.upstreamFor(nodeID)
		if !ok {
			return nil, fmt.Errorf("node %d: upstream address not known yet", nodeID)
		}
		conn, err := s.dialOne(ctx, &d, addr)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", nodeID, err)
		}
		return conn, nil
	}
	var errs []error
	for _, addr := range s.cfg.Upstream.BootstrapServers {
		conn, err := s.dialOne(ctx, &d, addr)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no bootstrap server reachable: %w", errors.Join(errs...))
}

// dialOne connects to addr and secures the connection as configured.
func (s *Server) dialOne(ctx context.Context, d *net.Dialer, addr string) (net.Conn, error) {
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		deadline, _ := ctx.Deadline()
		var secured net.Conn
		if secured, err = s.secureUpstream(conn, addr, deadline); err == nil {
			return secured, nil
		}
		conn.Close()
	}
	s.metrics.dialErrors.Inc()
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
			s.log.Info().Int("brokers", s.routes.count()).Msg("upstream metadata fetched; ready")
			return
		}
		if ctx.Err() != nil {
			return // stopped (Shutdown): not an upstream problem
		}
		s.log.Warn().Err(err).Dur("retry_in", backoff).Msg("upstream metadata not available yet")
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
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.cfg.Upstream.BootstrapServers...),
		kgo.DialTimeout(s.cfg.Upstream.DialTimeout),
		kgo.RequestRetries(0),
	}
	if s.sec.upstreamTLS != nil {
		opts = append(opts, kgo.DialTLSConfig(s.sec.upstreamTLS.Clone()))
	}
	if s.sec.upstreamMech != nil {
		opts = append(opts, kgo.SASL(s.sec.upstreamMech))
	}
	cl, err := kgo.NewClient(opts...)
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
		if _, _, err := s.routes.MapBroker(b.NodeID, b.Host, b.Port); err != nil {
			return err
		}
	}
	return nil
}
