package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// In SASL terminate mode kproxy answers a client's ApiVersions before it
// authenticated itself, from what it learnt of the node's upstream, so that
// nothing an unauthenticated client sends makes kproxy dial or log in
// upstream.
const (
	// apiVersionsMaxAge is how old a cached answer may be before the next
	// upstream connection kproxy makes for an authenticated client to that
	// node refreshes it (one request on the fresh connection, before the
	// client's). It bounds how long a broker upgrade goes unseen.
	apiVersionsMaxAge = time.Minute
	// apiVersionsRetry is how long a failed fetch for an empty entry is
	// remembered, so a flood of unauthenticated clients against a node
	// that is down costs at most one dial per period.
	apiVersionsRetry = time.Second
)

// apiVersionsCache holds, per upstream node (bootstrapNode for the
// bootstrap listener), the ApiVersions response kproxy gives clients: the
// upstream's, after the engine's ApiVersions response filters (the clamp,
// feature filters, saslVersions). Each process fills its own: from every
// ApiVersions response it relays, from a request of its own on each fresh
// upstream connection once the entry is older than apiVersionsMaxAge, and,
// for a node it knows nothing of yet, from one fetch over its own
// connection, shared by every client that waits for it.
type apiVersionsCache struct {
	// base bounds the fetches, which outlive the clients that wait for
	// them: it ends when the server shuts down.
	base  context.Context
	mu    sync.Mutex
	nodes map[int32]*apiVersionsEntry
	now   func() time.Time
}

type apiVersionsEntry struct {
	resp       *kmsg.ApiVersionsResponse // nil until filled; never modified once stored
	at         time.Time                 // when resp was learnt
	refreshing bool                      // a fresh upstream connection is refreshing resp
	// fetching is closed when the fetch for an empty entry ends; nil when
	// none runs. fetchErr and failedAt describe the last failed fetch.
	fetching chan struct{}
	fetchErr error
	failedAt time.Time
}

func newAPIVersionsCache(base context.Context) *apiVersionsCache {
	return &apiVersionsCache{base: base, nodes: map[int32]*apiVersionsEntry{}, now: time.Now}
}

func (c *apiVersionsCache) entry(node int32) *apiVersionsEntry {
	e := c.nodes[node]
	if e == nil {
		e = &apiVersionsEntry{}
		c.nodes[node] = e
	}
	return e
}

// store records resp, a successful response after the response filters,
// as node's answer. The cache keeps a copy. A response at a lower version
// than the cached one, which lacks the fields the newer layouts add
// (features above all), replaces it only once the cached one is stale.
func (c *apiVersionsCache) store(node int32, resp *kmsg.ApiVersionsResponse) {
	if resp.ErrorCode != 0 {
		return
	}
	cp, err := copyAPIVersions(resp)
	if err != nil {
		return // cannot happen for a response kproxy just encoded or decoded
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(node)
	now := c.now()
	if e.resp != nil && cp.Version < e.resp.Version && now.Sub(e.at) < apiVersionsMaxAge {
		return
	}
	e.resp, e.at, e.fetchErr = cp, now, nil
}

// claimRefresh reports whether the caller, which has just opened an
// authenticated upstream connection to node, should refresh node's entry
// on it; at most one caller at a time is told so. It must call
// refreshDone when finished.
func (c *apiVersionsCache) claimRefresh(node int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(node)
	if e.refreshing || (e.resp != nil && c.now().Sub(e.at) < apiVersionsMaxAge) {
		return false
	}
	e.refreshing = true
	return true
}

func (c *apiVersionsCache) refreshDone(node int32) {
	c.mu.Lock()
	c.entry(node).refreshing = false
	c.mu.Unlock()
}

// get returns node's answer. An empty entry is filled by fetch, which runs
// once for all callers waiting at the same time and, after failing, not
// again for apiVersionsRetry; until ctx ends the caller waits for it. A
// stale entry is returned as it is: the next authenticated connection to
// the node refreshes it.
func (c *apiVersionsCache) get(ctx context.Context, node int32, fetch func(context.Context) (*kmsg.ApiVersionsResponse, error)) (*kmsg.ApiVersionsResponse, error) {
	for {
		c.mu.Lock()
		e := c.entry(node)
		if e.resp != nil {
			resp := e.resp
			c.mu.Unlock()
			return resp, nil
		}
		if e.fetching == nil && e.fetchErr != nil && c.now().Sub(e.failedAt) < apiVersionsRetry {
			err := e.fetchErr
			c.mu.Unlock()
			return nil, err
		}
		wait := e.fetching
		if wait == nil {
			wait = make(chan struct{})
			e.fetching = wait
			go c.fill(node, e, wait, fetch)
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for node %d's ApiVersions: %w", node, ctx.Err())
		}
	}
}

// fill runs fetch for an empty entry on its own goroutine, so that a
// caller that gives up does not abandon the fetch for the others.
func (c *apiVersionsCache) fill(node int32, e *apiVersionsEntry, done chan struct{}, fetch func(context.Context) (*kmsg.ApiVersionsResponse, error)) {
	defer close(done)
	resp, err := fetch(c.base)
	if err == nil {
		c.store(node, resp)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e.fetching = nil
	if err != nil {
		e.fetchErr, e.failedAt = err, c.now()
	} else if e.resp == nil {
		e.fetchErr, e.failedAt = errors.New("upstream ApiVersions answered an error"), c.now()
	}
}

// copyAPIVersions returns a deep copy of resp that aliases no buffer.
func copyAPIVersions(resp *kmsg.ApiVersionsResponse) (*kmsg.ApiVersionsResponse, error) {
	body := resp.AppendTo(nil)
	cp := kmsg.NewPtrApiVersionsResponse()
	cp.SetVersion(resp.Version)
	if err := cp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("copy ApiVersions response: %w", err)
	}
	return cp, nil
}

// apiVersionsAnswer is cached as the response to an ApiVersions request at
// version with correlation id corr.
func apiVersionsAnswer(cached *kmsg.ApiVersionsResponse, version int16, corr int32) []byte {
	resp := *cached // shallow: the cached response is never modified
	resp.Version = version
	resp.ThrottleMillis = 0
	return protocol.AppendResponseFrame(nil, corr, &resp)
}

// fetchAPIVersions asks node's upstream for its ApiVersions over a
// connection of kproxy's own (logged in with kproxy's credentials), for an
// empty cache entry.
func (s *Server) fetchAPIVersions(ctx context.Context, node int32) (*kmsg.ApiVersionsResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Upstream.DialTimeout)
	defer cancel()
	conn, _, err := s.openUpstream(ctx, node)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	resp, err := s.requestAPIVersions(ctx, conn)
	if err == nil {
		s.log.Debug().Int32("node_id", node).Int("api_keys", len(resp.ApiKeys)).Msg("fetched upstream ApiVersions for unauthenticated clients")
	}
	return resp, err
}

// requestAPIVersions sends ApiVersions on conn, which has nothing else in
// flight, at the highest version kmsg knows (or the broker's highest, if
// it has fewer), and passes the answer through the response filters.
func (s *Server) requestAPIVersions(ctx context.Context, conn net.Conn) (*kmsg.ApiVersionsResponse, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kproxy", "1"
	for attempt := 0; ; attempt++ {
		kresp, err := auth.Request(ctx, conn, "kproxy", req)
		if err != nil {
			return nil, fmt.Errorf("upstream ApiVersions: %w", err)
		}
		resp := kresp.(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode == wire.ErrCodeUnsupportedVersion && attempt == 0 {
			// KIP-511: the broker listed the ApiVersions versions it has.
			for _, k := range resp.ApiKeys {
				if k.ApiKey == wire.APIVersionsKey && k.MaxVersion < req.Version {
					req.Version = k.MaxVersion
				}
			}
			continue
		}
		if resp.ErrorCode != 0 {
			return nil, fmt.Errorf("upstream ApiVersions: error code %d", resp.ErrorCode)
		}
		// Every listener's table has the same ApiVersions handlers: only
		// addresses differ.
		for _, h := range s.listeners[0].responses().handlers.lookup(wire.APIVersionsKey) {
			// The response is kept: a release is never called (see
			// filter.OnResponseReleasing).
			if _, err := h.Run(resp); err != nil {
				return nil, fmt.Errorf("upstream ApiVersions: %w", err)
			}
		}
		return resp, nil
	}
}

// warmAPIVersions fills the cache for the bootstrap listener and every
// node known, so that the first unauthenticated clients of a new process
// already find their answer. Errors leave an entry empty; its first client
// then fetches it.
func (s *Server) warmAPIVersions(ctx context.Context) {
	for _, node := range append([]int32{bootstrapNode}, s.nodes.ids()...) {
		if _, err := s.apiVersions.get(ctx, node, s.apiVersionsFetcher(node)); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Debug().Err(err).Int32("node_id", node).Msg("upstream ApiVersions not cached yet")
		}
	}
}

func (s *Server) apiVersionsFetcher(node int32) func(context.Context) (*kmsg.ApiVersionsResponse, error) {
	return func(ctx context.Context) (*kmsg.ApiVersionsResponse, error) { return s.fetchAPIVersions(ctx, node) }
}
