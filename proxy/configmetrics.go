package proxy

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/internal/labels"
)

// configMetrics report the configuration in force and its reloads:
// kproxy_config_reloads_total{result}, kproxy_config_info{hash} (1 for the
// configuration in force) and kproxy_config_loaded_timestamp_seconds.
type configMetrics struct {
	reloads        *prometheus.CounterVec
	info           *prometheus.GaugeVec
	loaded         prometheus.Gauge
	succeeded, bad prometheus.Counter
}

// newConfigMetrics registers the configuration metrics with reg; cfg is
// the configuration kproxy started with.
func newConfigMetrics(reg prometheus.Registerer, cfg *config.Config) *configMetrics {
	m := &configMetrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_config_reloads_total",
			Help: "Configuration reloads (SIGHUP, file change), by result: success, or failure (unreadable, invalid or not applied; what was in force stays).",
		}, []string{labels.Result}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kproxy_config_info",
			Help: "1, labelled with the hash of the configuration in force (secrets left out): replicas with the same settings show the same hash.",
		}, []string{labels.Hash}),
		loaded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kproxy_config_loaded_timestamp_seconds", Help: "Unix time the configuration in force was loaded.",
		}),
	}
	reg.MustRegister(m.reloads, m.info, m.loaded)
	m.succeeded, m.bad = m.reloads.WithLabelValues(labels.Success), m.reloads.WithLabelValues(labels.Failure)
	m.inForce(cfg)
	return m
}

// reloaded counts one reload; with err nil, cfg is now in force.
func (m *configMetrics) reloaded(cfg *config.Config, err error) {
	if err != nil {
		m.bad.Inc()
		return
	}
	m.succeeded.Inc()
	m.inForce(cfg)
}

func (m *configMetrics) inForce(cfg *config.Config) {
	m.info.Reset()
	m.info.WithLabelValues(cfg.Hash()).Set(1)
	m.loaded.Set(float64(time.Now().UnixNano()) / 1e9)
}
