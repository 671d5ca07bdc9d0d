package policyconfig

import (
	"fmt"
	"math"
	"time"
)

// Quota is one quota rule (docs/quotas.md): the limits that apply to the
// connections of principals matching Principals. A limit left out (0) does
// not apply. For each kind of limit, the first rule in order that matches
// the connection and sets that limit is the one in force, as Kafka applies
// the most specific quota entity.
type Quota struct {
	// Name identifies the rule in metrics and audit lines.
	Name string `yaml:"name"`
	// Principals are matchers as in policy rules; "*" is everyone (Kafka's
	// default quota).
	Principals []string `yaml:"principals"`
	// ProduceBytesPerSecond is Kafka's producer_byte_rate: Produce request
	// bytes per second.
	ProduceBytesPerSecond float64 `yaml:"produce_bytes_per_second"`
	// FetchBytesPerSecond is Kafka's consumer_byte_rate: Fetch response
	// bytes per second.
	FetchBytesPerSecond float64 `yaml:"fetch_bytes_per_second"`
	// RequestPercentage is Kafka's request_percentage: the share of one
	// thread's time (100 = one whole thread) kproxy may spend on the
	// principal's requests per quota window.
	RequestPercentage float64 `yaml:"request_percentage"`
	// ConnectionCreationRate is Kafka's connection_creation_rate: new
	// connections per second.
	ConnectionCreationRate float64 `yaml:"connection_creation_rate"`
	// MaxConnections bounds the principal's open connections at once.
	MaxConnections int `yaml:"max_connections"`
}

// QuotaWindows is how quotas are measured: Kafka's quota.window.num and
// quota.window.size.seconds.
type QuotaWindows struct {
	// Samples is the number of windows kept (quota.window.num, default 11).
	Samples int `yaml:"samples"`
	// Size is one window's length (quota.window.size.seconds, default 1s).
	Size time.Duration `yaml:"size"`
}

// Quota defaults: the broker's.
const (
	DefaultQuotaSamples    = 11
	DefaultQuotaWindowSize = time.Second
	// DefaultQuotaAuditSampleRate is policy.quota_audit_sample_rate when
	// left out: one throttled request in a hundred is written to the
	// audit log.
	DefaultQuotaAuditSampleRate = 0.01
)

// QuotaWindowsOrDefault is p.QuotaWindows with defaults filled in.
func (p *Policy) QuotaWindowsOrDefault() QuotaWindows {
	w := QuotaWindows{Samples: DefaultQuotaSamples, Size: DefaultQuotaWindowSize}
	if p == nil || p.QuotaWindows == nil {
		return w
	}
	if p.QuotaWindows.Samples > 0 {
		w.Samples = p.QuotaWindows.Samples
	}
	if p.QuotaWindows.Size > 0 {
		w.Size = p.QuotaWindows.Size
	}
	return w
}

// QuotaReplicasOrDefault is p.QuotaReplicas, 1 when left out.
func (p *Policy) QuotaReplicasOrDefault() int {
	if p == nil || p.QuotaReplicas < 1 {
		return 1
	}
	return p.QuotaReplicas
}

// QuotaAuditSampleRateOrDefault is p.QuotaAuditSampleRate, or its default
// when left out (nil).
func (p *Policy) QuotaAuditSampleRateOrDefault() float64 {
	if p == nil || p.QuotaAuditSampleRate == nil {
		return DefaultQuotaAuditSampleRate
	}
	return *p.QuotaAuditSampleRate
}

// validateQuotas checks policy.quotas and the quota settings.
func (p *Policy) validateQuotas(bad Bad) {
	names := map[string]string{}
	for i, q := range p.Quotas {
		key := fmt.Sprintf("policy.quotas[%d]", i)
		validateRuleName(bad, key, q.Name, names)
		validatePrincipals(bad, key, q.Principals, true)
		limits := []struct {
			key   string
			value float64
		}{
			{"produce_bytes_per_second", q.ProduceBytesPerSecond},
			{"fetch_bytes_per_second", q.FetchBytesPerSecond},
			{"request_percentage", q.RequestPercentage},
			{"connection_creation_rate", q.ConnectionCreationRate},
			{"max_connections", float64(q.MaxConnections)},
		}
		set := false
		for _, l := range limits {
			if l.value < 0 || math.IsNaN(l.value) || math.IsInf(l.value, 0) {
				bad(key+"."+l.key, "%v: must be a positive number, or left out for no limit", l.value)
			}
			set = set || l.value > 0
		}
		if !set {
			bad(key, "quota %q sets no limit: set produce_bytes_per_second, fetch_bytes_per_second, request_percentage, connection_creation_rate or max_connections", q.Name)
		}
	}
	if w := p.QuotaWindows; w != nil {
		if w.Samples < 0 || w.Samples == 1 || w.Samples > 1000 {
			bad("policy.quota_windows.samples", "%d: must be 2 to 1000 (default %d, Kafka's quota.window.num)", w.Samples, DefaultQuotaSamples)
		}
		if w.Size < 0 || (w.Size > 0 && w.Size < 10*time.Millisecond) || w.Size > time.Hour {
			bad("policy.quota_windows.size", "%v: must be 10ms to 1h (default %v, Kafka's quota.window.size.seconds)", w.Size, DefaultQuotaWindowSize)
		}
	}
	if p.QuotaReplicas < 0 {
		bad("policy.quota_replicas", "%d: must be the number of kproxy replicas sharing the quotas (at least 1, default 1)", p.QuotaReplicas)
	}
	if r := p.QuotaAuditSampleRate; r != nil && (*r < 0 || *r > 1 || math.IsNaN(*r)) {
		bad("policy.quota_audit_sample_rate", "%v: must be 0 (no audit lines) to 1 (every throttled request), default %v", *r, DefaultQuotaAuditSampleRate)
	}
}

// QuotasOnly reports whether the policy section holds quotas and nothing
// that authorizes or governs requests. kproxy then enforces the quotas
// alone: without rules there is nothing to authorize, so there is no
// default deny either (write default: deny or allow, or any rule, to
// authorize as well).
func (p *Policy) QuotasOnly() bool {
	return p != nil && len(p.Quotas) > 0 && len(p.Rules) == 0 && len(p.Governance) == 0 &&
		p.Mode == "" && p.Default == "" && p.BrokerDefaults == nil
}

// Authorizes is p, or nil when p holds quotas alone (QuotasOnly): the
// policy the enforcer applies.
func (p *Policy) Authorizes() *Policy {
	if p.QuotasOnly() {
		return nil
	}
	return p
}
