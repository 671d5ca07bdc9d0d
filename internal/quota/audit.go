package quota

import (
	"math/rand/v2"
	"net/netip"
	"time"
)

// Throttle is one throttled request, as its audit line records it.
type Throttle struct {
	Time time.Time
	// Quota is the rule's name and Kind the rate it limits.
	Quota string
	Kind  Kind
	// Who was throttled, as the policy's audit lines name a connection.
	Principal, ClientID, Listener, VirtualCluster string
	Client                                        netip.Addr
	// Throttle is the throttle time the response carries.
	Throttle time.Duration
	// SampleRate is policy.quota_audit_sample_rate when the line was
	// written, so that counts of lines can be scaled back.
	SampleRate float64
}

// Auditor takes the sampled audit lines of throttled requests: the
// policy's audit log (audit.output). It must not block.
type Auditor interface {
	AuditThrottle(Throttle)
}

// auditThrottle hands a throttled request to the auditor at the sample
// rate in force when the connection was bound.
func (b *Binding) auditThrottle(k Kind, r *rule, throttle time.Duration, now time.Time) {
	a := b.engine.audit
	if a == nil || b.auditRate <= 0 || (b.auditRate < 1 && rand.Float64() >= b.auditRate) {
		return
	}
	a.AuditThrottle(Throttle{
		Time: now, Quota: r.name, Kind: k,
		Principal: b.principal, ClientID: b.who.ClientID, Listener: b.who.Listener,
		VirtualCluster: b.who.VirtualCluster, Client: b.who.Addr,
		Throttle: throttle, SampleRate: b.auditRate,
	})
}
