package proxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/protocol"
)

// Metrics are kproxy's Prometheus instruments. Request counters are resolved
// per API key up front so the data path never looks a label up.
type Metrics struct {
	connsActive   *prometheus.GaugeVec
	connsTotal    *prometheus.CounterVec
	connsClosed   *prometheus.CounterVec
	requests      []prometheus.Counter
	requestsVec   *prometheus.CounterVec
	dialErrors    prometheus.Counter
	dialsSkipped  prometheus.Counter
	upstreamsDown prometheus.Gauge
	ready         prometheus.Gauge
	brokerListens prometheus.Gauge
	// bufferedBytes and bufferedLimit are limits.max_buffered_bytes' use
	// and bound.
	bufferedBytes prometheus.Gauge
	bufferedLimit prometheus.Gauge
}

// NewMetrics registers kproxy's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		connsActive: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kproxy_connections_active", Help: "Client connections currently open, by listener.",
		}, []string{"listener"}),
		connsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_connections_total", Help: "Client connections accepted, by listener.",
		}, []string{"listener"}),
		connsClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_connections_closed_total", Help: "Connection pairs closed, by reason.",
		}, []string{"reason"}),
		requestsVec: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_requests_total", Help: "Requests received from clients, by API.",
		}, []string{"api"}),
		dialErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kproxy_upstream_dial_errors_total", Help: "Failed upstream connection attempts.",
		}),
		dialsSkipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kproxy_upstream_dials_skipped_total",
			Help: "Client connections failed without dialing because their upstream is down and in backoff.",
		}),
		upstreamsDown: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kproxy_upstreams_down", Help: "Upstream addresses (nodes, bootstrap servers) currently known unreachable.",
		}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kproxy_ready", Help: "1 once listeners are bound and upstream metadata was fetched.",
		}),
		brokerListens: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kproxy_broker_listeners", Help: "Per-broker listeners open.",
		}),
		bufferedBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kproxy_buffered_bytes", Help: "Bytes of requests and responses held in memory for filters now (limits.max_buffered_bytes counts these).",
		}),
		bufferedLimit: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kproxy_buffered_bytes_limit", Help: "limits.max_buffered_bytes: beyond it kproxy stops reading from clients that want more.",
		}),
	}
	reg.MustRegister(m.connsActive, m.connsTotal, m.connsClosed, m.requestsVec, m.dialErrors, m.dialsSkipped, m.upstreamsDown, m.ready, m.brokerListens,
		m.bufferedBytes, m.bufferedLimit)
	for key := int16(0); key <= protocol.MaxKnownKey(); key++ {
		var c prometheus.Counter
		if protocol.KnownAPI(key) {
			c = m.requestsVec.WithLabelValues(protocol.APIName(key))
		}
		m.requests = append(m.requests, c)
	}
	return m
}

func (m *Metrics) countRequest(key int16) {
	if int(key) < len(m.requests) && m.requests[key] != nil {
		m.requests[key].Inc()
	}
}
