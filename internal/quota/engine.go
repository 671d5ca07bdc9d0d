package quota

import (
	"fmt"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/policy/policyconfig"
)

// maxIdleEntities bounds the quota state kept for principals with no open
// connection (kept for one measured span so that reconnecting does not
// reset a rate); beyond it, such state is dropped at once.
const maxIdleEntities = 100_000

// Anonymous is the user of a connection that has not authenticated.
const Anonymous = "ANONYMOUS"

// Principal is who a connection is, as quota rules match it: the
// attributes policy rules match on.
type Principal struct {
	// User is the authenticated user, Anonymous without one (as Kafka
	// and the policy name it).
	User, ClientID, Listener, CN string
	Addr                         netip.Addr
	// VirtualCluster is the virtual cluster the connection came in on ("":
	// none); Claims are its OAUTHBEARER token's (filter.Conn.Claims).
	VirtualCluster string
	Claims         map[string][]string
}

// String is the principal as Kafka writes it.
func (p *Principal) String() string { return "User:" + p.User }

// Matcher is one rule's compiled principals.
type Matcher interface {
	// Match reports whether p is one of the rule's principals.
	Match(p *Principal) bool
	// NamesClientIDs reports whether the rule matches on client ids: then
	// each (user, client id) has its own quota, as Kafka's <user,
	// client-id> quotas, else each user has one.
	NamesClientIDs() bool
}

// CompileMatcher compiles a rule's principals (policyconfig.ParsePrincipal
// syntax). The policy provides it (policy.QuotaMatcher), so principals
// match exactly as policy rules match them.
type CompileMatcher func(principals []string) (Matcher, error)

// Engine holds the quota rules in force and the measured state of every
// principal they apply to. It is safe for concurrent use.
type Engine struct {
	rules   atomic.Pointer[ruleSet]
	metrics *metrics
	audit   Auditor // nil: no audit lines
	compile CompileMatcher

	mu        sync.Mutex
	entities  map[entityKey]*entity
	idle      int // entities with no binding
	lastSweep time.Time
}

// New builds an engine from the policy's quotas (p may be nil: no quotas,
// until a reload brings some), whose principals compile compiles. Metrics
// go to reg (may be nil); sampled audit lines of throttled requests to
// audit (nil: none).
func New(p *policyconfig.Policy, compile CompileMatcher, reg prometheus.Registerer, audit Auditor) (*Engine, error) {
	e := &Engine{metrics: newMetrics(reg), audit: audit, compile: compile, entities: map[entityKey]*entity{}}
	if err := e.Reload(p); err != nil {
		return nil, err
	}
	return e, nil
}

// Reload replaces the rules in force with p's. Connections rebind to the
// new rules on their next request; measured rates carry over for rules
// that keep their name and windows.
func (e *Engine) Reload(p *policyconfig.Policy) error {
	var gen uint64 = 1
	if old := e.rules.Load(); old != nil {
		gen = old.gen + 1
	}
	set, err := compile(p, gen, e.compile, e.metrics)
	if err != nil {
		return err
	}
	e.rules.Store(set)
	return nil
}

// Active reports how many quota rules are in force.
func (e *Engine) Active() int { return len(e.rules.Load().rules) }

// ruleSet is one compiled generation of policy.quotas.
type ruleSet struct {
	gen       uint64
	rules     []*rule
	windows   Windows
	auditRate float64
}

// rule is one compiled quota rule, its limits already divided among the
// replicas.
type rule struct {
	name       string
	principals Matcher
	byClientID bool // principals.NamesClientIDs()
	limits     [numKinds]float64
	maxConns   int

	throttled, throttleSecs, admitted [numKinds]prometheus.Counter
	refusedRate, refusedMax           prometheus.Counter
	conns                             prometheus.Gauge
}

func compile(p *policyconfig.Policy, gen uint64, compileMatcher CompileMatcher, m *metrics) (*ruleSet, error) {
	w := p.QuotaWindowsOrDefault()
	set := &ruleSet{gen: gen, windows: Windows{Samples: w.Samples, Size: w.Size}, auditRate: p.QuotaAuditSampleRateOrDefault()}
	if p == nil {
		return set, nil
	}
	replicas := float64(p.QuotaReplicasOrDefault())
	for i, q := range p.Quotas {
		ps, err := compileMatcher(q.Principals)
		if err != nil {
			return nil, fmt.Errorf("policy.quotas[%d]: %w", i, err)
		}
		r := &rule{name: q.Name, principals: ps, byClientID: ps.NamesClientIDs()}
		r.limits[Produce] = q.ProduceBytesPerSecond / replicas
		r.limits[Fetch] = q.FetchBytesPerSecond / replicas
		r.limits[Request] = q.RequestPercentage / replicas
		r.limits[ConnectionCreation] = q.ConnectionCreationRate / replicas
		if q.MaxConnections > 0 {
			// At least one connection per replica, else the rule would
			// refuse everyone.
			r.maxConns = max(1, int(math.Floor(float64(q.MaxConnections)/replicas)))
		}
		for k := Kind(0); k < numKinds; k++ {
			r.throttled[k] = m.throttled.WithLabelValues(q.Name, k.String())
			r.throttleSecs[k] = m.throttleSecs.WithLabelValues(q.Name, k.String())
			r.admitted[k] = m.admittedBytes.WithLabelValues(q.Name, k.String())
		}
		r.refusedRate = m.refusedConns.WithLabelValues(q.Name, "connection_creation_rate")
		r.refusedMax = m.refusedConns.WithLabelValues(q.Name, "max_connections")
		r.conns = m.boundConns.WithLabelValues(q.Name)
		set.rules = append(set.rules, r)
	}
	return set, nil
}

// entityKey names the quota state of one principal under one rule.
type entityKey struct {
	rule, user, clientID string
	addr                 netip.Addr // unauthenticated connections' connection limits only
	windows              Windows
}

// entity is the measured state of one principal under one rule, shared
// by all its connections.
type entity struct {
	mu    sync.Mutex
	rates [numKinds]*Rate
	conns int // guarded by mu

	// refs and idleSince are guarded by Engine.mu.
	refs      int
	idleSince time.Time
}

func (en *entity) rate(k Kind, w Windows) *Rate {
	if en.rates[k] == nil {
		en.rates[k] = NewRate(w)
	}
	return en.rates[k]
}

// acquire returns the entity for key, counting one more binding.
func (e *Engine) acquire(key entityKey, now time.Time) *entity {
	e.mu.Lock()
	defer e.mu.Unlock()
	en := e.entities[key]
	if en == nil {
		en = &entity{}
		e.entities[key] = en
	} else if en.refs == 0 {
		e.idle--
	}
	en.refs++
	e.sweepLocked(now, key.windows)
	return en
}

// releaseEntity counts one binding less on the entity of key.
func (e *Engine) releaseEntity(key entityKey, en *entity, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	en.refs--
	if en.refs > 0 {
		return
	}
	if e.idle >= maxIdleEntities {
		delete(e.entities, key)
		return
	}
	e.idle++
	en.idleSince = now
}

// sweepLocked drops, at most once per window, the entities idle for
// longer than the measured span: their windows would be purged anyway.
func (e *Engine) sweepLocked(now time.Time, w Windows) {
	if now.Sub(e.lastSweep) < w.Size {
		return
	}
	e.lastSweep = now
	span := time.Duration(w.Samples) * w.Size
	for key, en := range e.entities {
		if en.refs == 0 && now.Sub(en.idleSince) >= span {
			delete(e.entities, key)
			e.idle--
		}
	}
}
