package engine

import (
	"net/netip"
	"strings"
	"time"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// RequestTiming is what the engine measured for one request and its response.
type RequestTiming struct {
	Key, Version  int16
	CorrelationID int32
	// NodeID is the listener's node, -1 for bootstrap.
	NodeID int32
	// Listener is "bootstrap" or "node-N" (SNI: its own name).
	Listener string
	// ClientID is the request's client.id; Principal the filter.Conn user,
	// "" if anonymous.
	ClientID, Principal string
	// VirtualCluster is the virtual cluster the listener serves, "" for
	// none.
	VirtualCluster string
	Client         netip.AddrPort
	// RequestBytes and ResponseBytes are the frames' sizes, size prefix
	// included, as the client sent and received them; ResponseBytes is 0
	// when no response is owed (acks=0) or a stage delivered it itself
	// (a raw SASL token).
	RequestBytes, ResponseBytes int
	// Start is when the request's size prefix was read.
	Start time.Time
	// SentUpstream is when the request loop began writing the request
	// upstream (a streamed frame's remaining bytes are relayed as they
	// arrive, so their transfer counts as upstream time); zero if kproxy
	// answered it.
	SentUpstream time.Time
	// UpstreamFirstByte is when the response loop found the response's
	// first bytes from upstream; zero if kproxy answered.
	UpstreamFirstByte time.Time
	// Done is when the response was written to the client (or, acks=0,
	// the request upstream).
	Done time.Time
	// ErrorCode is the response's top-level error code when kproxy decoded
	// it or answered the request itself, else -1.
	ErrorCode int16
	// Local is set when kproxy answered the request itself (policy denial,
	// SASL, pre-auth ApiVersions).
	Local bool
	// Sampled is set when a RequestSampler chose the request at its
	// header. Topic or TopicID is then the first topic a Produce or Fetch
	// request names (its name up to v12, its id from v13), read from the
	// bytes already buffered: nothing is decoded for it.
	Sampled bool
	Topic   string
	TopicID [16]byte
}

// Total is the round trip as kproxy saw it, Done - Start.
func (t *RequestTiming) Total() time.Duration { return t.Done.Sub(t.Start) }

// Upstream is the broker's part, UpstreamFirstByte - SentUpstream; zero
// for a local answer or a request owing no response.
func (t *RequestTiming) Upstream() time.Duration {
	if t.SentUpstream.IsZero() || t.UpstreamFirstByte.IsZero() {
		return 0
	}
	return t.UpstreamFirstByte.Sub(t.SentUpstream)
}

// InProxy is the time spent inside kproxy: Total minus Upstream.
func (t *RequestTiming) InProxy() time.Duration { return t.Total() - t.Upstream() }

// RequestObserver sees every request once its response is delivered. It
// runs on the connection's response goroutine (for a request owing no
// response, or answered before any upstream connection exists, on its
// request goroutine): it must not block (hand off to a bounded queue), and
// must not keep t, which is reused for the next request.
type RequestObserver interface{ ObserveRequest(t *RequestTiming) }

// RequestSampler is implemented by an observer that wants more than the
// timing of some requests (a tracer's sampled ones). SampleRequest is asked
// at each request's header, on the request goroutine: it must be cheap and
// not allocate. The first observer that implements it is the one asked.
type RequestSampler interface {
	SampleRequest(key, version int16) bool
}

// WithRequestObservers adds observers of every request, after kproxy's
// own metrics, in order.
func WithRequestObservers(obs ...RequestObserver) Option {
	return func(s *Server) {
		s.observers = append(s.observers, obs...)
		for _, o := range obs {
			if rs, ok := o.(RequestSampler); ok && s.sampler == nil {
				s.sampler = rs
			}
		}
	}
}

// sample marks t sampled when the sampler wants the request with header
// h, whose body starts with bodyPrefix (which aliases the read buffer),
// and reads its first topic.
func (s *Server) sample(t *RequestTiming, h protocol.RequestHeader, bodyPrefix []byte) {
	if s.sampler == nil || !s.sampler.SampleRequest(h.APIKey, h.APIVersion) {
		return
	}
	t.Sampled = true
	topic, id := wire.FirstTopic(h.APIKey, h.APIVersion, bodyPrefix)
	t.Topic, t.TopicID = strings.Clone(topic), id
}

// observe completes t with what the pair knows and hands it to every
// observer. t must be a field the calling loop owns, so that passing it
// allocates nothing.
func (p *pair) observe(t *RequestTiming) {
	t.NodeID, t.Listener, t.Client = p.nodeID, p.listener, p.conn.Client
	if t.ResponseBytes > 0 {
		p.sent.Add(int64(t.ResponseBytes))
		p.bytesOut.Add(float64(t.ResponseBytes))
	}
	for _, o := range p.s.observers {
		o.ObserveRequest(t)
	}
}
