package topicids

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Requester sends a request to the cluster as kproxy itself (upstream.tls
// and upstream.sasl); *kgo.Client is one (upstreamclient.New builds it).
type Requester interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// Bounds of topic id resolution.
const (
	// resolveTimeout bounds one upstream Metadata request; the client's
	// request waits at most this long before it is answered
	// UNKNOWN_TOPIC_ID, as without a resolver.
	resolveTimeout = 5 * time.Second
	// maxResolving bounds the distinct ids resolved at once: a client
	// sending made-up ids costs at most this many upstream requests in
	// flight; past it ids are not resolved until one finishes.
	maxResolving = 64
	// unknownFor is how long an id the cluster does not know is answered
	// UNKNOWN_TOPIC_ID without asking again (a deleted topic, a made-up
	// id); maxUnknown bounds how many such ids are remembered.
	unknownFor = 5 * time.Second
	maxUnknown = 4096
)

// Resolver asks the cluster for the names of topic ids: one Metadata
// request per id at a time however many requests wait for it (single
// flight), bounded in time and in how many run at once, with a short
// memory of ids the cluster does not know. Names learned go into its Map,
// like those learned from relayed responses. Behind a load balancer a
// client's Metadata may have gone through another kproxy replica, so the
// id it names was never seen here (docs/operations.md, State and
// replicas).
type Resolver struct {
	upstream Requester
	ids      *Map
	now      func() time.Time

	mu       sync.Mutex
	inflight map[[16]byte]*resolveCall
	unknown  map[[16]byte]time.Time // until when the cluster is not asked again
}

// resolveCall is one Metadata request in flight; done closes when it has
// returned and every topic it named has been learned.
type resolveCall struct{ done chan struct{} }

// NewResolver returns a Resolver asking upstream, learning into ids. A nil
// upstream only names what ids learned.
func NewResolver(upstream Requester, ids *Map) *Resolver {
	return &Resolver{upstream: upstream, ids: ids, now: time.Now,
		inflight: map[[16]byte]*resolveCall{}, unknown: map[[16]byte]time.Time{}}
}

// Learn records that id names the topic name (seen in a response).
func (r *Resolver) Learn(id [16]byte, name string) { r.ids.Learn(id, name) }

// Name returns id's topic name, asking the cluster if it is not known yet
// (ctx bounds the wait, as does resolveTimeout). ok is false when the
// cluster does not know the id either, or could not be asked in time.
func (r *Resolver) Name(ctx context.Context, id [16]byte) (string, bool) {
	if name, ok := r.ids.Name(id); ok {
		return name, true
	}
	if r.upstream == nil {
		return "", false
	}
	r.mu.Lock()
	if until, ok := r.unknown[id]; ok {
		if r.now().Before(until) {
			r.mu.Unlock()
			return "", false
		}
		delete(r.unknown, id)
	}
	call, joined := r.inflight[id]
	if !joined {
		if len(r.inflight) >= maxResolving {
			r.mu.Unlock()
			return "", false
		}
		call = &resolveCall{done: make(chan struct{})}
		r.inflight[id] = call
	}
	r.mu.Unlock()
	if !joined {
		r.fetch(id, call)
	}
	select {
	case <-call.done:
	case <-ctx.Done():
		return "", false
	}
	return r.ids.Name(id)
}

// fetch sends the Metadata request for id, learns what it names, and
// releases every waiter.
func (r *Resolver) fetch(id [16]byte, call *resolveCall) {
	known := false
	defer func() {
		r.mu.Lock()
		delete(r.inflight, id)
		if !known {
			if len(r.unknown) >= maxUnknown {
				clear(r.unknown)
			}
			r.unknown[id] = r.now().Add(unknownFor)
		}
		r.mu.Unlock()
		close(call.done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.TopicID = id
	req.Topics = append(req.Topics, t)
	resp, err := r.upstream.Request(ctx, req)
	if err != nil {
		return
	}
	for _, rt := range resp.(*kmsg.MetadataResponse).Topics {
		if rt.Topic != nil && kerr.ErrorForCode(rt.ErrorCode) == nil {
			r.ids.Learn(rt.TopicID, *rt.Topic)
			known = known || rt.TopicID == id
		}
	}
}
