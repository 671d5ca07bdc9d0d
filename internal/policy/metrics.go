package policy

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the policy's Prometheus instruments, resolved up front so the
// data path never looks a label up.
type Metrics struct {
	decisions    *prometheus.CounterVec
	allowed      prometheus.Counter
	denied       prometheus.Counter
	auditDenied  prometheus.Counter // would be denied; audit mode forwarded it
	hidden       prometheus.Counter // left out of a listing
	auditDropped prometheus.Counter
	reloads      *prometheus.CounterVec
	reloadOK     prometheus.Counter
	reloadFailed prometheus.Counter
}

// newMetrics registers the policy metrics with reg.
func newMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_policy_decisions_total",
			Help: "Policy decisions, by result: allowed, denied, audit_denied (audit mode: would be denied, forwarded), hidden (left out of a listing).",
		}, []string{"result"}),
		auditDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kproxy_policy_audit_dropped_total",
			Help: "Audit log lines dropped because the writer fell behind (audit.buffer_size).",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_policy_reloads_total",
			Help: "Policy reloads, by result: success or failure (the old policy stays in force).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.decisions, m.auditDropped, m.reloads)
	m.allowed = m.decisions.WithLabelValues("allowed")
	m.denied = m.decisions.WithLabelValues("denied")
	m.auditDenied = m.decisions.WithLabelValues("audit_denied")
	m.hidden = m.decisions.WithLabelValues("hidden")
	m.reloadOK = m.reloads.WithLabelValues("success")
	m.reloadFailed = m.reloads.WithLabelValues("failure")
	return m
}
