package quota

import (
	"time"
)

// Conn is one connection's quota state: the binding to the rules in force
// and what it was bound for. The zero value is a connection not yet bound.
// A Conn belongs to its connection's request loop, except Binding, which
// the response loop may read once the request loop published it.
type Conn struct {
	binding  *Binding
	gen      uint64
	user     string
	clientID string
	seen     bool
}

// Binding is what the connection's principal is held to: for each kind,
// the rule in force and the principal's shared state under it. nil: no
// rule matches and the connection costs nothing.
func (c *Conn) Binding() *Binding { return c.binding }

// Stale reports whether c must be bound again (Refresh) before its next
// request: never bound, the rules reloaded, or the user or client id
// changed. It is the only quota work on the path of a request.
func (e *Engine) Stale(c *Conn, user, clientID string) bool {
	return !c.seen || c.gen != e.rules.Load().gen || c.user != user || c.clientID != clientID
}

// Binding ties one connection to the rules matching its principal.
type Binding struct {
	engine  *Engine
	windows Windows
	rate    [numKinds]sensor
	// conns is the rule and entity whose max_connections the connection
	// counts against (rule nil: none).
	conns sensor
	// principal and who name the connection in audit lines (who without
	// the claims, which no line writes).
	principal string
	who       Principal
	auditRate float64
}

// sensor is one kind's rule and the principal's state under it.
type sensor struct {
	rule *rule
	key  entityKey
	ent  *entity
}

// Admission is the verdict on a connection newly bound to rules limiting
// connections: Refuse it (after Delay, as Kafka closes a connection over
// its IP's connection rate once the throttle time is over), or let it in.
type Admission struct {
	Refuse bool
	Delay  time.Duration
	Rule   string
	Reason string // "max_connections" or "connection_creation_rate"
}

// Refresh binds c to the rules in force for principal p (with Stale true).
// When the principal changed, the connection is a new arrival for the
// connection limits of the rules it now falls under, and the verdict says
// whether it may stay; a reload alone never refuses a connection already
// open. A refused connection is left unbound.
//
// connUser is the connection's user as Stale was given it (p.User is
// that user, or ANONYMOUS for none).
func (e *Engine) Refresh(c *Conn, connUser string, p *Principal, now time.Time) Admission {
	set := e.rules.Load()
	arrived := !c.seen || c.user != connUser || c.clientID != p.ClientID
	old := c.binding
	b := e.bind(set, p, now)
	var adm Admission
	if b != nil {
		adm = b.admit(old, arrived, now)
		if adm.Refuse {
			// Counted: a connection admit counted against max_connections
			// before the connection rate refused it is uncounted here.
			e.release(b, now, true)
			b = nil
		}
	}
	e.release(old, now, true)
	*c = Conn{binding: b, gen: set.gen, user: connUser, clientID: p.ClientID, seen: true}
	return adm
}

// Release gives back what c holds, when its connection closes.
func (e *Engine) Release(c *Conn) {
	e.release(c.binding, time.Now(), true)
	c.binding = nil
}

func (e *Engine) bind(set *ruleSet, p *Principal, now time.Time) *Binding {
	var b *Binding
	for _, r := range set.rules {
		wanted := false
		for k := Kind(0); k < numKinds; k++ {
			wanted = wanted || (r.limits[k] > 0 && (b == nil || b.rate[k].rule == nil))
		}
		wanted = wanted || (r.maxConns > 0 && (b == nil || b.conns.rule == nil))
		if !wanted || !r.principals.Match(p) {
			continue
		}
		if b == nil {
			who := *p
			who.Claims = nil
			b = &Binding{engine: e, windows: set.windows, principal: p.String(), who: who, auditRate: set.auditRate}
		}
		key := entityKey{rule: r.name, user: p.User, windows: set.windows}
		if r.byClientID {
			key.clientID = p.ClientID
		}
		// Connection limits of unauthenticated connections are per address,
		// as Kafka's connection quotas are per IP: else anyone could use up
		// a "*" rule's connections for every client still to authenticate.
		connKey := key
		if p.User == Anonymous {
			connKey.addr = p.Addr
		}
		use := func(s *sensor, key entityKey) { // one reference per sensor
			*s = sensor{rule: r, key: key, ent: e.acquire(key, now)}
		}
		for k := Kind(0); k < numKinds; k++ {
			if r.limits[k] > 0 && b.rate[k].rule == nil {
				rateKey := key
				if k == ConnectionCreation {
					rateKey = connKey
				}
				use(&b.rate[k], rateKey)
			}
		}
		if r.maxConns > 0 && b.conns.rule == nil {
			use(&b.conns, connKey)
		}
	}
	return b
}

// admit counts the connection against the connection limits of b and
// says whether it may stay. old is the binding it replaces; arrived: the
// principal changed (else only the rules did).
func (b *Binding) admit(old *Binding, arrived bool, now time.Time) Admission {
	if s := b.conns; s.rule != nil {
		moved := old == nil || old.conns.ent != s.ent
		s.ent.mu.Lock()
		over := moved && arrived && s.ent.conns >= s.rule.maxConns
		if !over && moved {
			s.ent.conns++
			s.rule.conns.Inc()
		}
		s.ent.mu.Unlock()
		if over {
			s.rule.refusedMax.Inc()
			b.conns = sensor{} // not counted: release must not uncount it
			b.engine.releaseEntity(s.key, s.ent, now)
			return Admission{Refuse: true, Rule: s.rule.name, Reason: "max_connections"}
		}
		if !moved { // old's count moves to b
			old.conns.rule = nil
			b.engine.releaseEntity(old.conns.key, old.conns.ent, now)
			old.conns.ent = nil
		}
	}
	s := b.rate[ConnectionCreation]
	if s.rule == nil || !arrived || (old != nil && old.rate[ConnectionCreation].ent == s.ent) {
		return Admission{}
	}
	s.ent.mu.Lock()
	r := s.ent.rate(ConnectionCreation, b.windows)
	throttle := r.RecordChecked(1, s.rule.limits[ConnectionCreation], now)
	if throttle > 0 {
		r.Record(-1, now) // a refused connection is not counted (as Kafka unrecords it)
	}
	s.ent.mu.Unlock()
	if throttle == 0 {
		return Admission{}
	}
	s.rule.refusedRate.Inc()
	return Admission{Refuse: true, Delay: min(throttle, b.windows.Size), Rule: s.rule.name, Reason: "connection_creation_rate"}
}

// release gives back b's entities; counted: b's connection is counted in
// its max_connections entity.
func (e *Engine) release(b *Binding, now time.Time, counted bool) {
	if b == nil {
		return
	}
	for k := range b.rate {
		if s := b.rate[k]; s.ent != nil {
			e.releaseEntity(s.key, s.ent, now)
		}
	}
	if s := b.conns; s.ent != nil {
		if counted {
			s.ent.mu.Lock()
			s.ent.conns--
			s.ent.mu.Unlock()
			s.rule.conns.Dec()
		}
		e.releaseEntity(s.key, s.ent, now)
	}
}

// sensor is b's sensor of kind k; false when b holds the connection to no
// rate of that kind.
func (b *Binding) sensor(k Kind) (sensor, bool) {
	if b == nil {
		return sensor{}, false
	}
	return b.rate[k], b.rate[k].rule != nil
}

// Limits reports whether b holds the connection to a rate of kind k.
func (b *Binding) Limits(k Kind) bool { return b != nil && b.rate[k].rule != nil }

// Record counts value (bytes for Produce and Fetch, percent of one
// thread's second for Request) at now and returns the throttle time the
// request it belongs to must carry: 0 within the quota. Kafka bounds the
// request quota's throttle time by one window; byte quotas are not.
func (b *Binding) Record(k Kind, value float64, now time.Time) time.Duration {
	s, ok := b.sensor(k)
	if !ok {
		return 0
	}
	s.ent.mu.Lock()
	throttle := s.ent.rate(k, b.windows).RecordChecked(value, s.rule.limits[k], now)
	s.ent.mu.Unlock()
	if k == Request {
		throttle = min(throttle, b.windows.Size)
	} else {
		s.rule.admitted[k].Add(value)
	}
	b.countThrottle(k, s.rule, throttle, now)
	return throttle
}

// countThrottle counts a request of kind k throttled under r (its metrics
// and the audit); nothing when throttle is 0.
func (b *Binding) countThrottle(k Kind, r *rule, throttle time.Duration, now time.Time) {
	if throttle <= 0 {
		return
	}
	r.throttled[k].Inc()
	r.throttleSecs[k].Add(throttle.Seconds())
	b.auditThrottle(k, r, throttle, now)
}

// Check returns the throttle time the principal is under for kind k at
// now, recording nothing: 0 within the quota. It is the verdict on a
// request that arrives while its principal may be over the quota, on any
// of its connections; one that is over is counted as a throttled request.
func (b *Binding) Check(k Kind, now time.Time) time.Duration {
	s, ok := b.sensor(k)
	if !ok {
		return 0
	}
	s.ent.mu.Lock()
	// Whole milliseconds, as Kafka computes throttle times: less than one
	// is none, and no response says "throttled for 0 ms".
	throttle := s.ent.rate(k, b.windows).Throttle(s.rule.limits[k], now).Truncate(time.Millisecond)
	s.ent.mu.Unlock()
	if k == Request {
		throttle = min(throttle, b.windows.Size)
	}
	b.countThrottle(k, s.rule, throttle, now)
	return throttle
}

// RecordUnlessOver is Check and Record at once, as a broker decides a
// fetch: if the principal is over its quota of kind k at now, it records
// nothing and returns the throttle with recorded false (the response is
// to be replaced by an empty one); else it records value and returns the
// throttle the response must carry. One lock for both, so that
// connections of the principal answered at the same moment cannot all
// pass the check before any of them is recorded.
func (b *Binding) RecordUnlessOver(k Kind, value float64, now time.Time) (throttle time.Duration, recorded bool) {
	s, ok := b.sensor(k)
	if !ok {
		return 0, false
	}
	s.ent.mu.Lock()
	r := s.ent.rate(k, b.windows)
	over := r.Throttle(s.rule.limits[k], now).Truncate(time.Millisecond)
	if over == 0 {
		throttle = r.RecordChecked(value, s.rule.limits[k], now)
	}
	s.ent.mu.Unlock()
	if over > 0 {
		throttle = over
	} else {
		s.rule.admitted[k].Add(value)
	}
	b.countThrottle(k, s.rule, throttle, now)
	return throttle, over == 0
}

// RecordNoThrottle counts value without checking the quota: the next
// request pays for it (Kafka's recordNoThrottle, for the network thread's
// share of a request's time).
func (b *Binding) RecordNoThrottle(k Kind, value float64, now time.Time) {
	s, ok := b.sensor(k)
	if !ok {
		return
	}
	s.ent.mu.Lock()
	s.ent.rate(k, b.windows).Record(value, now)
	s.ent.mu.Unlock()
}
