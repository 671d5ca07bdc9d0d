package engine

import (
	"bufio"
	"errors"
	"fmt"
	"time"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/quota"
	"github.com/kproxy/kproxy/internal/wire"
)

// reasonQuota: a connection quota (max_connections,
// connection_creation_rate) refused the connection.
const reasonQuota = "quota_refused"

// quotaHolder holds requests to the connection's quotas in the chain's
// quota phase (responseHolder). Its hold on a request: ref is the
// connection's *quota.Binding when the request was read, delay the
// throttle its request already exceeded (a produce quota) or its response
// brought, to set in the response, and flags fetchHeld (a fetch held to
// the fetch quota, fetchquota.go) and fetchCounted (its response's bytes
// are counted already).
type quotaHolder struct{}

const (
	fetchHeld uint8 = 1 << iota
	fetchCounted
)

// binding is the quota binding h holds its request to.
func binding(h *hold) *quota.Binding {
	b, _ := h.ref.(*quota.Binding)
	return b
}

func (quotaHolder) link() filter.Link {
	return filter.Link{Phase: filter.PhaseQuota, Filter: "quota.Engine"}
}

func (quotaHolder) afterFilters(p *pair, r *clientRequest, cr *bufio.Reader, up *direction) error {
	return p.quotaStage(r, cr, up)
}

func (quotaHolder) forwarded(p *pair, r *clientRequest) { p.recordRequestTime(r) }

func (quotaHolder) owing(p *pair, h hold) {
	if h.flags&fetchHeld == 0 {
		return
	}
	if p.fetchAnswered == nil {
		p.fetchAnswered = make(chan struct{}, 1)
	}
	p.fetchesOwed.Add(1)
}

func (quotaHolder) deliverLocal(p *pair, owed *pending, down *direction) (bool, error) {
	if owed.hold.flags&fetchHeld == 0 {
		return false, nil
	}
	return true, p.writeThrottled(owed, down, owed.local, owed.hold.delay)
}

func (quotaHolder) beforeRelay(p *pair, owed *pending, down *direction, frameLen int, need filter.Need) (filter.Need, time.Duration, bool, error) {
	delay, done, err := p.quotaResponse(owed, down, frameLen, &need)
	return need, delay, done, err
}

func (quotaHolder) delivered(p *pair, owed *pending, err error) {
	if owed.hold.flags&fetchHeld != 0 {
		p.fetchDelivered()
	}
	if err == nil {
		p.recordResponseTime(owed, time.Now())
	}
}

// quotaStage holds the request r to the connection's quotas: it binds the
// connection to the rules in force when its principal or the rules
// changed (refusing it if a connection quota says so), counts a produce
// request's bytes, muting the connection when they exceed the quota, and
// holds a fetch to the fetch quota (fetchQuota). A connection no rule matches pays one comparison here.
func (p *pair) quotaStage(r *clientRequest, cr *bufio.Reader, up *direction) error {
	e := p.s.quotas
	if e == nil {
		return nil
	}
	if e.Stale(&p.quota, p.conn.User, p.conn.ClientID) {
		if err := p.bindQuota(e); err != nil {
			return err
		}
	}
	b := p.quota.Binding()
	if b == nil || r.owed.local != nil {
		return nil
	}
	r.owed.hold.ref = b
	switch {
	case r.owed.key == wire.ProduceKey:
		// Kafka counts a produce request's size against the produce quota.
		if t := b.Record(quota.Produce, float64(r.frameLen), time.Now()); t > 0 {
			r.owed.hold.delay = t
			p.mute(t)
		}
	case r.owed.key == wire.FetchKey && b.Limits(quota.Fetch):
		return p.fetchQuota(r, cr, up, b)
	}
	return nil
}

// bindQuota binds the connection to e's rules for its principal now.
func (p *pair) bindQuota(e *quota.Engine) error {
	principal := quota.Principal{User: p.conn.User, ClientID: p.conn.ClientID, Listener: p.conn.Listener,
		CN: p.conn.CertCN, Addr: p.conn.Client.Addr().Unmap(), VirtualCluster: p.conn.VirtualCluster, Claims: p.conn.Claims}
	if principal.User == "" {
		principal.User = quota.Anonymous
	}
	adm := e.Refresh(&p.quota, p.conn.User, &principal, time.Now())
	if !adm.Refuse {
		return nil
	}
	// Debug: the close line (sampled) says why; a flood of refusals must
	// not flood the log.
	p.logger().Debug().Str("quota", adm.Rule).Str("reason", adm.Reason).Str("principal", principal.String()).
		Dur("delay", adm.Delay).Msg("connection refused by a quota")
	if adm.Delay > 0 && !p.sleep(adm.Delay) {
		return fail(reasonClientClosed, errors.New("closed while a connection quota delayed it"))
	}
	return fail(reasonQuota, fmt.Errorf("quota %q: %s exceeded", adm.Rule, adm.Reason))
}

// releaseQuota gives back the connection's share of its quotas once the
// request loop has stopped.
func (p *pair) releaseQuota() {
	if p.s.quotas != nil {
		p.s.quotas.Release(&p.quota)
	}
}

// mute stops the request loop reading the client for d from now (KIP-219:
// the broker mutes a throttled client's channel), or longer if already so.
func (p *pair) mute(d time.Duration) {
	until := time.Now().Add(d).UnixNano()
	for {
		cur := p.mutedUntil.Load()
		if cur >= until || p.mutedUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// waitMuted waits, at a frame boundary, until the connection's throttle is
// over. The client's bytes wait in the socket (TCP back-pressure), not in
// kproxy; other connections are not affected. A drain or close ends the
// wait.
func (p *pair) waitMuted() error {
	for {
		d := time.Until(time.Unix(0, p.mutedUntil.Load()))
		if d <= 0 || p.draining.Load() {
			return nil
		}
		if !p.sleep(min(d, drainPoll)) {
			return fail(reasonClientClosed, errors.New("closed while throttled"))
		}
	}
}

// sleep waits d unless the pair closes first (then false).
func (p *pair) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.closed:
		return false
	case <-t.C:
		return true
	}
}

// responseThrottle is the throttle time the response to owed must carry,
// frameLen bytes long, on the response loop: the produce quota's (from the
// request loop), the fetch quota's for the response's bytes (unless
// chargeFetchResponse counted them already, into its hold's delay), and the
// request quota's for the time kproxy spent on the request so far; the
// largest. A throttle mutes the connection from now.
func (p *pair) responseThrottle(owed *pending, frameLen int, now time.Time) time.Duration {
	b := binding(&owed.hold)
	if b == nil {
		return 0
	}
	throttle := owed.hold.delay
	if owed.key == wire.FetchKey && owed.hold.flags&fetchCounted == 0 {
		throttle = max(throttle, b.Record(quota.Fetch, float64(frameLen), now))
	}
	if b.Limits(quota.Request) {
		// The request loop's time is recorded already (recordRequestTime):
		// this checks the quota, as a broker does when it sends the
		// response.
		throttle = max(throttle, b.Record(quota.Request, 0, now))
	}
	if throttle > owed.hold.delay { // the request loop muted for that already
		p.mute(throttle)
	}
	return throttle
}

// throttleResponse is responseThrottle on the response loop, which also
// delays the response by the throttle time for a client too old to back
// off by itself, as a broker does.
func (p *pair) throttleResponse(owed *pending, down *direction, frameLen int) (time.Duration, error) {
	throttle := p.responseThrottle(owed, frameLen, time.Now())
	if throttle > 0 && !clientBacksOff(owed.key, owed.version) {
		if err := down.w.Flush(); err != nil { // what is owed before it goes out now
			return 0, fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
		}
		if !p.sleep(throttle) {
			return 0, fail(reasonClientClosed, errors.New("closed while delaying a throttled response"))
		}
	}
	return throttle, nil
}

// quotaResponse holds the response to owed, of frameLen bytes and next in
// down, to the connection's quotas: a fetch over the fetch quota is
// answered in its place (done), a throttle the response must carry is set
// in place where the frame allows it, or returned for the decoded
// response (need raised to Decode), or relayed at once for a streamed
// Produce (done).
func (p *pair) quotaResponse(owed *pending, down *direction, frameLen int, need *filter.Need) (throttle time.Duration, done bool, err error) {
	if owed.hold.flags&fetchHeld != 0 {
		if replaced, err := p.chargeFetchResponse(owed, down, frameLen); replaced || err != nil {
			return 0, true, err
		}
	}
	if throttle, err = p.throttleResponse(owed, down, frameLen); err != nil {
		return 0, true, err
	}
	switch {
	case throttle == 0:
	case owed.key == wire.FetchKey && setFetchThrottle(down, owed.version, frameLen, throttle):
	case owed.key == wire.ProduceKey && owed.version >= 1 && *need == filter.Stream:
		return throttle, true, p.relayThrottledProduce(owed, down, frameLen, throttle)
	default:
		*need = filter.Decode // rare: set throttle_time_ms in the decoded response
	}
	return throttle, false, nil
}

// recordRequestTime counts the time the request loop spent on r, from
// its frame's first bytes to its last written upstream, against the
// request quota, without throttling: its response checks the quota.
func (p *pair) recordRequestTime(r *clientRequest) {
	if b := binding(&r.owed.hold); b.Limits(quota.Request) && !p.requestStart.IsZero() {
		now := time.Now()
		b.RecordNoThrottle(quota.Request, threadPercent(now.Sub(p.requestStart)), now)
	}
}

// recordResponseTime counts the time the response loop spent delivering
// owed against the request quota, for the next request to pay (Kafka
// records network thread time without throttling).
func (p *pair) recordResponseTime(owed *pending, done time.Time) {
	if b := binding(&owed.hold); b.Limits(quota.Request) && !p.observed.UpstreamFirstByte.IsZero() {
		b.RecordNoThrottle(quota.Request, threadPercent(done.Sub(p.observed.UpstreamFirstByte)), done)
	}
}

// threadPercent is d as a percentage of one thread's second, the unit of
// Kafka's request quota.
func threadPercent(d time.Duration) float64 { return d.Seconds() * 100 }
