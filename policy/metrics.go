package policy

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/labels"
)

// policyMetrics are the policy's Prometheus instruments, resolved up front so the
// data path never looks a label up.
type policyMetrics struct {
	decisions    *prometheus.CounterVec
	allow        prometheus.Counter
	deny         prometheus.Counter
	auditDeny    prometheus.Counter // would be denied; audit mode forwarded it
	hide         prometheus.Counter // left out of a listing
	auditDropped prometheus.Counter
	reloads      *prometheus.CounterVec
	reloadOK     prometheus.Counter
	reloadFailed prometheus.Counter

	// byRule counts decisions by decision, operation and rule
	// (kproxy_policy_rule_decisions_total); its series are created the
	// first time a combination is seen. Rule names come from the
	// configuration, so the labels stay bounded.
	byRule   *prometheus.CounterVec
	ruleMu   sync.RWMutex
	ruleSeen map[ruleKey]prometheus.Counter
}

type ruleKey struct{ decision, operation, rule string }

// unrecordedRule labels allowed produce decisions taken on the raw fast
// path, which does not keep the deciding rule (audit.log_allowed does).
const unrecordedRule = "unrecorded"

// countRule counts one decision by decision (allow, deny, audit_deny,
// hide), operation (an ACL operation or governance check)
// and rule. Finding a seen combination allocates nothing.
func (m *policyMetrics) countRule(decision, operation, rule string, n float64) {
	k := ruleKey{decision, operation, rule}
	m.ruleMu.RLock()
	c, ok := m.ruleSeen[k]
	m.ruleMu.RUnlock()
	if !ok {
		m.ruleMu.Lock()
		if c, ok = m.ruleSeen[k]; !ok {
			c = m.byRule.WithLabelValues(decision, operation, rule)
			m.ruleSeen[k] = c
		}
		m.ruleMu.Unlock()
	}
	c.Add(n)
}

// newMetrics registers the policy metrics with reg.
func newMetrics(reg prometheus.Registerer) *policyMetrics {
	m := &policyMetrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_policy_decisions_total",
			Help: "Policy decisions, by decision: allow, deny, audit_deny (audit mode: would be denied, forwarded), hide (left out of a listing); the audit line's decision field says the same.",
		}, []string{labels.Decision}),
		auditDropped: newAuditDropped(),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kproxy_policy_reloads_total",
			Help: "Policy reloads, by result: success or failure (the old policy stays in force).",
		}, []string{labels.Result}),
	}
	m.byRule = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kproxy_policy_rule_decisions_total",
		Help: "Policy decisions by decision (allow, deny, audit_deny, hide), operation (ACL operation or governance check) and deciding rule (" + DefaultRule + ": policy.default; " + unrecordedRule + ": an allowed produce on the raw fast path).",
	}, []string{labels.Decision, labels.Operation, labels.Rule})
	m.ruleSeen = map[ruleKey]prometheus.Counter{}
	reg.MustRegister(m.decisions, m.auditDropped, m.reloads, m.byRule)
	m.allow = m.decisions.WithLabelValues(DecisionAllow)
	m.deny = m.decisions.WithLabelValues(DecisionDeny)
	m.auditDeny = m.decisions.WithLabelValues(DecisionAuditDeny)
	m.hide = m.decisions.WithLabelValues(DecisionHide)
	m.reloadOK = m.reloads.WithLabelValues(labels.Success)
	m.reloadFailed = m.reloads.WithLabelValues(labels.Failure)
	return m
}

// newAuditDropped counts the audit lines a writer dropped.
func newAuditDropped() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kproxy_policy_audit_dropped_total",
		Help: "Audit log lines dropped because the writer fell behind (audit.buffer_size).",
	})
}
