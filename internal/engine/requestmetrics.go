package engine

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/labels"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// latencyBuckets resolve tens of microseconds at the low end and reach
// about ten seconds: 10µs·2^k for k = 0..20.
var latencyBuckets = prometheus.ExponentialBuckets(10e-6, 2, 21)

// otherPrincipal is the principal label of every principal beyond
// metrics.principal_limit.
const otherPrincipal = "other"

// requestMetrics counts requests and responses and observes their
// latency (a RequestObserver). The series of an API key, or a key and
// version, are created the first time it is seen and kept in slices
// indexed by key, so that only keys a client used appear and the data path
// finds its series with two slice lookups.
type requestMetrics struct {
	requests, responses, errors *prometheus.CounterVec
	total, upstream, inProxy    *prometheus.HistogramVec
	byKey                       []atomic.Pointer[apiSeries]
	mu                          sync.Mutex // creating series

	principals     *prometheus.CounterVec // nil: metrics.principal_limit is 0
	principalLimit int
	principalMu    sync.RWMutex
	byPrincipal    map[string]prometheus.Counter
	otherPrincipal prometheus.Counter
}

// apiSeries are one API key's series.
type apiSeries struct {
	name                     string
	byVersion                []atomic.Pointer[prometheus.Counter] // the last: a version kproxy does not support
	fromUpstream, local      prometheus.Counter
	total, upstream, inProxy prometheus.Observer
}

func newRequestMetrics(reg prometheus.Registerer, principalLimit int) *requestMetrics {
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, []string{labels.API})
	}
	m := &requestMetrics{
		requests: newCounterVec("kproxy_requests_total",
			"Requests received from clients, by API and API version (\"unsupported\": beyond what kproxy decodes).", labels.API, labels.Version),
		responses: newCounterVec("kproxy_responses_total",
			"Responses delivered to clients, by API and source: upstream, or local (kproxy answered: policy denial, SASL, ApiVersions before authentication).", labels.API, labels.Source),
		errors: newCounterVec("kproxy_response_errors_total",
			"Error codes other than 0 in responses kproxy decoded, walked or answered itself, by API and Kafka error name: the top-level code, and each topic's, partition's or group's own code (one count per entry carrying one).", labels.API, labels.Error),
		total: histogram("kproxy_request_duration_seconds",
			"Round trip of a request as kproxy saw it: from its size prefix read to its response written to the client."),
		upstream: histogram("kproxy_request_upstream_duration_seconds",
			"The broker's part of the round trip: from kproxy writing the request upstream to the response's first bytes arriving."),
		inProxy: histogram("kproxy_request_proxy_duration_seconds",
			"Time spent inside kproxy (read, decode, filters, encode, queueing): the round trip minus the upstream part."),
		byKey: make([]atomic.Pointer[apiSeries], wire.MaxKnownKey()+1),
	}
	reg.MustRegister(m.requests, m.responses, m.errors, m.total, m.upstream, m.inProxy)
	if principalLimit > 0 {
		m.principalLimit, m.byPrincipal = principalLimit, map[string]prometheus.Counter{}
		m.principals = newCounterVec("kproxy_principal_requests_total",
			"Requests by authenticated principal (\"\": anonymous), for the first metrics.principal_limit principals; the rest are counted as \"other\".", labels.Principal)
		reg.MustRegister(m.principals)
		m.otherPrincipal = m.principals.WithLabelValues(otherPrincipal)
	}
	return m
}

// series returns key's series, creating them the first time; nil for a
// key kproxy does not know.
func (m *requestMetrics) series(key int16) *apiSeries {
	if key < 0 || int(key) >= len(m.byKey) || !protocol.KnownAPI(key) {
		return nil
	}
	if s := m.byKey[key].Load(); s != nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.byKey[key].Load(); s != nil {
		return s
	}
	name := protocol.APIName(key)
	s := &apiSeries{
		name:         name,
		byVersion:    make([]atomic.Pointer[prometheus.Counter], protocol.MaxVersion(key)+2),
		fromUpstream: m.responses.WithLabelValues(name, "upstream"),
		local:        m.responses.WithLabelValues(name, "local"),
		total:        m.total.WithLabelValues(name),
		upstream:     m.upstream.WithLabelValues(name),
		inProxy:      m.inProxy.WithLabelValues(name),
	}
	m.byKey[key].Store(s)
	return s
}

// count counts one request header read from a client.
func (m *requestMetrics) count(key, version int16) {
	s := m.series(key)
	if s == nil {
		return
	}
	slot := len(s.byVersion) - 1 // unsupported
	if version >= 0 && int(version) < slot {
		slot = int(version)
	}
	if c := s.byVersion[slot].Load(); c != nil {
		(*c).Inc()
		return
	}
	label := "unsupported"
	if slot < len(s.byVersion)-1 {
		label = strconv.Itoa(slot)
	}
	c := m.requests.WithLabelValues(s.name, label) // the same counter if two race here
	s.byVersion[slot].Store(&c)
	c.Inc()
}

// ObserveRequest counts t's response and observes its latency split.
func (m *requestMetrics) ObserveRequest(t *RequestTiming) {
	s := m.series(t.Key)
	if s == nil {
		return
	}
	if t.Local {
		s.local.Inc()
	} else {
		s.fromUpstream.Inc()
	}
	if t.ErrorCode > 0 {
		m.countError(s, t.ErrorCode) // rare: decoded responses only
	}
	total := t.Total()
	upstream := t.Upstream()
	s.total.Observe(total.Seconds())
	if !t.SentUpstream.IsZero() && !t.UpstreamFirstByte.IsZero() {
		s.upstream.Observe(upstream.Seconds())
	}
	s.inProxy.Observe((total - upstream).Seconds())
	if m.principals != nil {
		m.principal(t.Principal).Inc()
	}
}

// principal is p's counter, or the "other" one once principalLimit
// principals have one.
func (m *requestMetrics) principal(p string) prometheus.Counter {
	m.principalMu.RLock()
	c, ok := m.byPrincipal[p]
	m.principalMu.RUnlock()
	if ok {
		return c
	}
	m.principalMu.Lock()
	defer m.principalMu.Unlock()
	if c, ok := m.byPrincipal[p]; ok {
		return c
	}
	if len(m.byPrincipal) >= m.principalLimit {
		return m.otherPrincipal
	}
	c = m.principals.WithLabelValues(p)
	m.byPrincipal[p] = c
	return c
}

// countEntryErrors counts the error codes of resp's entries (partitions,
// topics, groups), as its API's errorScope says; ObserveRequest counts
// the top-level one.
func (m *requestMetrics) countEntryErrors(resp kmsg.Response) {
	s := m.series(resp.Key())
	if s == nil {
		return
	}
	entryErrorCodes(resp, &responseErrorCounter{m: m, s: s})
}

// countError counts one error code in a response of s's API.
func (m *requestMetrics) countError(s *apiSeries, code int16) {
	m.errors.WithLabelValues(s.name, errorName(code)).Inc()
}

// errorName is the Kafka name of an error code ("UNKNOWN_SERVER_ERROR"
// for a code franz-go does not know, so that the label stays bounded).
func errorName(code int16) string {
	if err, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return err.Message
	}
	return kerr.UnknownServerError.Message
}
