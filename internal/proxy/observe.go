package proxy

import (
	"net/netip"
	"strings"
	"time"

	"github.com/kproxy/kproxy/internal/protocol"
)

// RequestTiming is what the engine measured for one request and its response.
type RequestTiming struct {
	Key, Version        int16
	CorrelationID       int32
	NodeID              int32  // the listener's node, -1 for bootstrap
	Listener            string // "bootstrap" or "node-N"
	ClientID, Principal string // Principal: the filter.Conn user, "" if anonymous
	Client              netip.AddrPort
	RequestBytes        int
	ResponseBytes       int
	Start               time.Time // the request's size prefix was read
	SentUpstream        time.Time // the request was written upstream; zero if kproxy answered it
	UpstreamFirstByte   time.Time // the response's first bytes arrived from upstream; zero if kproxy answered
	Done                time.Time // the response was written to the client (or, acks=0, the request upstream)
	ErrorCode           int16     // the response's top-level error code when kproxy decoded it, else -1
	Local               bool      // kproxy answered the request itself
	// Sampled is set when a RequestSampler observer chose the request at
	// its header. Topic or TopicID is then the first topic a Produce or
	// Fetch request names: its name up to v12, its id from v13 on.
	Sampled bool
	Topic   string
	TopicID [16]byte
}

// RequestObserver sees every request once its response is delivered. It
// runs on the connection's response goroutine: it must not block (hand off
// to a bounded queue) and must not keep t, which the engine reuses.
type RequestObserver interface{ ObserveRequest(t *RequestTiming) }

// RequestSampler is implemented by an observer that wants more than timing
// for some requests (a tracer's sampled ones): SampleRequest is asked at
// each request's header, on the request goroutine, and must be cheap and
// not allocate. For a request it returns true for, RequestTiming.Sampled is
// set and the engine reads the request's first topic name into Topic from
// the bytes already buffered: no request is decoded for it.
type RequestSampler interface {
	SampleRequest(key, version int16) bool
}

// WithRequestObservers adds observers of every request's timing.
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

// observed is what the request loop records in a pending response for
// the observers; zero when there are none.
type observed struct {
	start, sent         time.Time
	requestBytes        int
	clientID, principal string
	sampled             bool
	topic               string
	topicID             [16]byte
}

// observeRequest records the request with header h (frameLen bytes, body
// starting with bodyPrefix) into owed, when anything observes requests.
// The client id string is kept across requests: it is built only when the
// client changes it.
func (p *pair) observeRequest(owed *pending, start time.Time, h protocol.RequestHeader, clientID, bodyPrefix []byte, frameLen int) {
	if len(p.s.observers) == 0 {
		return
	}
	if string(clientID) != p.observedClientID {
		p.observedClientID = string(clientID)
	}
	owed.obs = observed{start: start, requestBytes: frameLen, clientID: p.observedClientID, principal: p.conn.User}
	if p.s.sampler != nil && p.s.sampler.SampleRequest(h.APIKey, h.APIVersion) {
		owed.obs.sampled = true
		topic, id := protocol.FirstTopic(h.APIKey, h.APIVersion, bodyPrefix)
		owed.obs.topic, owed.obs.topicID = strings.Clone(topic), id // topic aliases the read buffer
	}
}

// deliverObserved tells the observers about owed, just delivered:
// responseBytes long, its first upstream bytes seen at firstByte (zero for
// a local answer). The timing lives in the pair: the response loop is its
// only user, and handing observers a pointer to it allocates nothing.
func (p *pair) deliverObserved(owed pending, responseBytes int, firstByte time.Time, local bool) {
	if len(p.s.observers) == 0 {
		return
	}
	t := &p.timing
	*t = RequestTiming{
		Key: owed.key, Version: owed.version, CorrelationID: owed.correlationID,
		NodeID: p.nodeID, Listener: p.listener, ClientID: owed.obs.clientID, Principal: owed.obs.principal,
		Client: p.conn.Client, RequestBytes: owed.obs.requestBytes, ResponseBytes: responseBytes,
		Start: owed.obs.start, Done: time.Now(), ErrorCode: -1, Local: local,
		Sampled: owed.obs.sampled, Topic: owed.obs.topic, TopicID: owed.obs.topicID,
	}
	if !local {
		t.SentUpstream, t.UpstreamFirstByte = owed.obs.sent, firstByte
	}
	for _, o := range p.s.observers {
		o.ObserveRequest(t)
	}
}
