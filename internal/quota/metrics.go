package quota

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/labels"
)

// metrics are the quota metrics, per rule (label quota) and kind.
type metrics struct {
	throttled     *prometheus.CounterVec
	throttleSecs  *prometheus.CounterVec
	admittedBytes *prometheus.CounterVec
	refusedConns  *prometheus.CounterVec
	boundConns    *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_quota_throttled_requests_total",
			Help: "Requests answered with a throttle time by a quota rule, by rule and kind (produce, fetch, request).",
		}, []string{labels.Quota, labels.Kind}),
		throttleSecs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_quota_throttle_seconds_total",
			Help: "Throttle time kproxy asked for (and muted connections for), by rule and kind.",
		}, []string{labels.Quota, labels.Kind}),
		admittedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_quota_admitted_bytes_total",
			Help: "Produce request and fetch response bytes counted against a quota rule, by rule and kind.",
		}, []string{labels.Quota, labels.Kind}),
		refusedConns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_quota_connections_refused_total",
			Help: "Connections closed by a quota rule, by rule and reason (max_connections, connection_creation_rate).",
		}, []string{labels.Quota, labels.Reason}),
		boundConns: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kproxy_quota_connections",
			Help: "Open connections counted against a quota rule's max_connections, by rule.",
		}, []string{labels.Quota}),
	}
	if reg != nil {
		reg.MustRegister(m.throttled, m.throttleSecs, m.admittedBytes, m.refusedConns, m.boundConns)
	}
	return m
}
