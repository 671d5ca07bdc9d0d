package engine

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/labels"
)

// serverMetrics are kproxy's Prometheus instruments (README, Admin endpoint,
// lists every one). Series with a label the data path knows only at run
// time (API key and version, principal) are created the first time they
// are seen, then found again without a lookup that allocates.
type serverMetrics struct {
	connsActive *prometheus.GaugeVec
	connsTotal  *prometheus.CounterVec
	connsClosed *prometheus.CounterVec
	// acceptErrors counts failed accepts, by listener and reason (accept.go).
	acceptErrors *prometheus.CounterVec
	// handshaking counts connections in their handshake (admission.go).
	handshaking   prometheus.Gauge
	requests      *requestMetrics
	inFlight      prometheus.Gauge
	receivedBytes *prometheus.CounterVec
	sentBytes     *prometheus.CounterVec
	dialsSkipped  prometheus.Counter
	upstream      *upstreamMetrics
	upstreamAuth  *upstreamAuthMetrics
	upstreamsDown prometheus.Gauge
	ready         prometheus.Gauge
	brokerListens prometheus.Gauge
	// bootstrapOpen is 1 while the bootstrap listener accepts (bootstrapgate.go).
	bootstrapOpen prometheus.Gauge
	tlsFailures   *prometheus.CounterVec
	// certExpiry is each listener certificate's notAfter (certexpiry.go).
	certExpiry *prometheus.GaugeVec
	sasl       *prometheus.CounterVec
	// jwksFetches and jwksKeys follow the OAUTHBEARER key set.
	jwksFetches *prometheus.CounterVec
	jwksKeys    prometheus.Gauge
	// bufferedBytes and bufferedLimit are limits.max_buffered_bytes' use
	// and bound.
	bufferedBytes prometheus.Gauge
	bufferedLimit prometheus.Gauge
	// coordinatorErrors counts group coordinator errors (coordinator.go).
	coordinatorErrors *prometheus.CounterVec
}

// metricsSettings choose the optional series.
type metricsSettings struct {
	// PrincipalLimit > 0 adds kproxy_principal_requests_total for up to
	// that many principals (the rest are counted as "other"); 0: none.
	PrincipalLimit int
}

// newServerMetrics registers kproxy's metrics with reg.
func newServerMetrics(reg prometheus.Registerer, set metricsSettings) *serverMetrics {
	m := &serverMetrics{
		connsActive: newGaugeVec("kproxy_connections_active",
			"Client connections currently open (from accept, handshakes included), by listener.", labels.Listener),
		connsTotal: newCounterVec("kproxy_connections_total",
			"Client connections accepted, by listener.", labels.Listener),
		connsClosed: newCounterVec("kproxy_connections_closed_total",
			"Connection pairs closed, by reason.", labels.Reason),
		acceptErrors: newCounterVec("kproxy_accept_errors_total",
			"Failed accepts of new client connections, by listener and reason (emfile: out of file descriptors, enfile, enobufs, enomem, econnaborted, timeout, other); the listener retries after a backoff of 5 ms doubling to 1 s.", labels.Listener, labels.Reason),
		handshaking: newGauge("kproxy_connections_handshaking",
			"Client connections accepted and still in their handshake (PROXY header, TLS, SASL): limits.max_handshakes bounds them."),
		requests: newRequestMetrics(reg, set.PrincipalLimit),
		inFlight: newGauge("kproxy_requests_in_flight",
			"Client requests queued or forwarded whose response is not delivered yet, all connections."),
		receivedBytes: newCounterVec("kproxy_received_bytes_total",
			"Bytes of request frames read from clients, by listener.", labels.Listener),
		sentBytes: newCounterVec("kproxy_sent_bytes_total",
			"Bytes of response frames written to clients, by listener.", labels.Listener),
		dialsSkipped: newCounter("kproxy_upstream_dials_skipped_total",
			"Client connections failed without dialing because their upstream is down and in backoff."),
		upstream:          newUpstreamMetrics(reg),
		upstreamAuth:      newUpstreamAuthMetrics(reg),
		coordinatorErrors: newCoordinatorErrors(reg),
		upstreamsDown: newGauge("kproxy_upstreams_down",
			"Upstream addresses (nodes, bootstrap servers) currently known unreachable."),
		ready: newGauge("kproxy_ready",
			"1 once listeners are bound and upstream metadata was fetched."),
		brokerListens: newGauge("kproxy_broker_listeners",
			"Per-broker listeners open."),
		bootstrapOpen: newGauge("kproxy_bootstrap_listener_open",
			"1 while the bootstrap listener accepts connections; 0 while it refuses them because no upstream bootstrap server is reachable (or none is configured)."),
		tlsFailures: newCounterVec("kproxy_tls_handshake_failures_total",
			"TLS handshakes that failed, by side: client (a client of kproxy) or upstream (kproxy to a broker).", labels.Side),
		certExpiry: newGaugeVec("kproxy_tls_certificate_expiry_timestamp_seconds",
			"When each listener certificate in use expires (its notAfter, Unix seconds), by certificate (its configuration key: listeners.tls, listeners.sni.tls, listeners.sni.certificates[i]) and serial (hexadecimal); a reloaded certificate replaces its predecessor's series.", labels.Certificate, labels.Serial),
		sasl: newCounterVec("kproxy_sasl_authentications_total",
			"Client SASL authentications kproxy answered (terminate mode) or watched (passthrough mode), by mechanism and result (success, failure).", labels.Mechanism, labels.Result),
		jwksFetches: newCounterVec("kproxy_oauth_jwks_fetches_total",
			"Fetches of listeners.sasl.oauthbearer's JWKS (at start, scheduled, or for an unknown kid), by result (success, failure: the keys held stay in use).", labels.Result),
		jwksKeys: newGauge("kproxy_oauth_jwks_keys",
			"OAUTHBEARER token signing keys held (0 also when OAUTHBEARER is not enabled)."),
		bufferedBytes: newGauge("kproxy_buffered_bytes",
			"Bytes of requests and responses held in memory for filters now (limits.max_buffered_bytes counts these)."),
		bufferedLimit: newGauge("kproxy_buffered_bytes_limit",
			"limits.max_buffered_bytes: beyond it kproxy stops reading from clients that want more."),
	}
	reg.MustRegister(m.connsActive, m.connsTotal, m.connsClosed, m.acceptErrors, m.handshaking, m.inFlight, m.receivedBytes, m.sentBytes,
		m.dialsSkipped, m.upstreamsDown, m.ready, m.brokerListens, m.bootstrapOpen, m.tlsFailures, m.certExpiry, m.sasl,
		m.jwksFetches, m.jwksKeys, m.bufferedBytes, m.bufferedLimit)
	return m
}

func (m *serverMetrics) countRequest(key, version int16) { m.requests.count(key, version) }

// countSASL counts one client authentication with mechanism, a label
// the caller bounds (Server.countSASL).
func (m *serverMetrics) countSASL(mechanism, result string) {
	m.sasl.WithLabelValues(mechanism, result).Inc()
}
