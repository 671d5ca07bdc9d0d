package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/internal/config"
)

// backoffJitter is the jitter applied to each backoff (±20%, as Kafka's
// clients do) so that probes of several kproxy instances do not line up.
// How often a summary line is logged for an upstream that stays
// unreachable is log.sample.
const backoffJitter = 0.2

// healthSettings are the knobs of an upstreamHealth.
type healthSettings struct {
	// backoff is the wait after the first failed dial; each further
	// failure doubles it up to maxBackoff.
	backoff, maxBackoff time.Duration
	// logEvery is the shortest gap between two warnings for one upstream.
	logEvery time.Duration
	// probe dials addr, serving nodeID, once and reports the outcome; nil
	// disables probing.
	probe func(ctx context.Context, addr string, nodeID int32) error
	// changed is told (without the tracker's lock held) that addr went
	// down or came back; it asks down for the current state.
	changed func(addr string)
	now     func() time.Time
}

// upstreamHealth remembers, per upstream address (a node's advertised
// address or a bootstrap server), whether kproxy's connection attempts
// fail, and bounds how often kproxy dials one that does: after a failure
// the address is down, no connection pair dials it, and a single probe per
// backoff interval (exponential, with jitter, reset by a success) finds
// out when it is back. Its log lines are aggregated: one warning when an
// address goes down, at most one summary per logEvery while it stays down,
// and one info line with the downtime when it is back.
type upstreamHealth struct {
	set     healthSettings
	log     zerolog.Logger
	metrics *serverMetrics

	ctx    context.Context // ends at close; probes and background dials use it
	cancel context.CancelFunc
	wg     sync.WaitGroup // probes and background dials

	mu        sync.Mutex
	endpoints map[string]*endpointHealth
	closed    bool
}

// endpointHealth is what upstreamHealth knows of one address.
type endpointHealth struct {
	addr   string
	nodeID int32 // the node served there, bootstrapNode if none is known
	down   bool
	// slow: a dial outlasted the bootstrap head start with no answer yet,
	// so bootstrap dials try other servers first.
	slow      bool
	failures  int // consecutive failed dials
	refused   int // connections failed without a dial since it went down
	downSince time.Time
	retryAt   time.Time // no probe before this
	lastErr   error
	logs      logSampler
	probing   bool // a probe goroutine runs for this address
}

func newUpstreamHealth(set healthSettings, log zerolog.Logger, m *serverMetrics) *upstreamHealth {
	if set.now == nil {
		set.now = time.Now
	}
	// A zero backoff would probe in a busy loop: Parse never leaves one, a
	// Config built by hand might.
	if set.backoff <= 0 {
		set.backoff = config.DefaultReconnectBackoff
	}
	set.maxBackoff = max(set.maxBackoff, set.backoff)
	ctx, cancel := context.WithCancel(context.Background())
	return &upstreamHealth{set: set, log: log, metrics: m, ctx: ctx, cancel: cancel,
		endpoints: map[string]*endpointHealth{}}
}

// upstreamDownError is returned instead of dialing an address that is down.
type upstreamDownError struct {
	addr    string
	retryIn time.Duration
	last    error
}

func (e *upstreamDownError) Error() string {
	return fmt.Sprintf("upstream %s unreachable, not dialed (next probe in %s): last attempt: %v",
		e.addr, durationText(e.retryIn), e.last)
}

// reportedError marks a dial error that upstreamHealth has logged or
// counted into a summary line: whoever closes a connection for it logs it
// at debug level only, so one dead upstream is not one warning per client
// connection.
type reportedError struct{ err error }

func (e reportedError) Error() string { return e.err.Error() }
func (e reportedError) Unwrap() error { return e.err }

// healthReported tells whether err was logged by upstreamHealth.
func healthReported(err error) bool {
	var r reportedError
	return errors.As(err, &r)
}

func (h *upstreamHealth) endpoint(addr string) *endpointHealth {
	e, ok := h.endpoints[addr]
	if !ok {
		e = &endpointHealth{addr: addr, nodeID: bootstrapNode, logs: logSampler{interval: h.set.logEvery}}
		h.endpoints[addr] = e
	}
	return e
}

// admit returns nil if addr may be dialed now, else an error (marked as
// reported) that says it is down; the refusal is counted.
func (h *upstreamHealth) admit(addr string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.endpoints[addr]
	if !ok || !e.down {
		return nil
	}
	e.refused++
	h.metrics.dialsSkipped.Inc()
	now := h.set.now()
	if ok, suppressed := e.logs.allow(now); ok {
		h.logStillDown(e, now, suppressed)
	}
	return reportedError{&upstreamDownError{addr: addr, retryIn: max(e.retryAt.Sub(now), 0), last: e.lastErr}}
}

// down reports whether addr is known unreachable.
func (h *upstreamHealth) down(addr string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.endpoints[addr]
	return ok && e.down
}

// order returns addrs with those known down left out, the others in their
// order except that slow ones come last.
func (h *upstreamHealth) order(addrs []string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var fast, slow []string
	for _, a := range addrs {
		switch e, ok := h.endpoints[a]; {
		case !ok:
			fast = append(fast, a)
		case e.down:
		case e.slow:
			slow = append(slow, a)
		default:
			fast = append(fast, a)
		}
	}
	return append(fast, slow...)
}

// markSlow records that a dial to addr has not been answered within the
// bootstrap head start.
func (h *upstreamHealth) markSlow(addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.endpoint(addr); !e.down {
		e.slow = true
	}
}

// record notes the outcome of a dial to addr for node nodeID
// (bootstrapNode for a bootstrap server). A cancelled dial, or one this
// process had no descriptors for (localExhaustion), says nothing about
// the upstream and is ignored: marking it down would close its listeners
// to every client. It returns err, marked as reported.
func (h *upstreamHealth) record(addr string, nodeID int32, err error) error {
	if err != nil && (errors.Is(err, context.Canceled) || localExhaustion(err)) {
		return err
	}
	h.mu.Lock()
	e := h.endpoint(addr)
	if nodeID != bootstrapNode {
		e.nodeID = nodeID
	}
	now := h.set.now()
	changed := false
	if err == nil {
		e.slow = false
		if e.down {
			h.withNode(h.log.Info(), e).Str("downtime", durationText(now.Sub(e.downSince))).
				Int("failed_attempts", e.failures).Int("connections_refused", e.refused).
				Int("suppressed", e.logs.take()).Msg("upstream reachable again")
			h.metrics.upstreamsDown.Dec()
			changed = true
		}
		e.down, e.failures, e.refused = false, 0, 0
		h.mu.Unlock()
		if changed && h.set.changed != nil {
			h.set.changed(addr)
		}
		return nil
	}
	e.failures++
	e.lastErr = err
	e.slow = false
	e.retryAt = now.Add(h.backoff(e.failures))
	if !e.down {
		e.down, e.downSince, e.refused = true, now, 0
		e.logs.take()
		e.logs.allow(now) // this line opens the interval
		h.withNode(h.log.Warn(), e).Err(err).Str("retry_in", durationText(e.retryAt.Sub(now))).
			Msg("upstream unreachable; not dialing it again before the backoff has passed")
		h.metrics.upstreamsDown.Inc()
		changed = true
		if h.set.probe != nil && !e.probing && !h.closed {
			e.probing = true
			h.wg.Add(1)
			go h.probeUntilUp(e)
		}
	} else if ok, suppressed := e.logs.allow(now); ok {
		h.logStillDown(e, now, suppressed)
	}
	h.mu.Unlock()
	if changed && h.set.changed != nil {
		h.set.changed(addr)
	}
	return reportedError{err}
}

// backoff is the wait after the n-th consecutive failure, jittered.
func (h *upstreamHealth) backoff(n int) time.Duration {
	d := h.set.maxBackoff
	if shift := n - 1; shift < 30 {
		d = min(h.set.backoff<<shift, h.set.maxBackoff)
	}
	return time.Duration(float64(d) * (1 - backoffJitter + 2*backoffJitter*rand.Float64()))
}

// logStillDown writes the summary line for an address that stays down.
// h.mu held.
func (h *upstreamHealth) logStillDown(e *endpointHealth, now time.Time, suppressed int) {
	h.withNode(h.log.Warn(), e).AnErr("last_error", e.lastErr).
		Str("down_for", durationText(now.Sub(e.downSince))).
		Str("retry_in", durationText(max(e.retryAt.Sub(now), 0))).
		Int("failed_attempts", e.failures).Int("connections_refused", e.refused).
		Int("suppressed", suppressed).Msg("upstream still unreachable")
}

func (h *upstreamHealth) withNode(ev *zerolog.Event, e *endpointHealth) *zerolog.Event {
	ev = ev.Str("upstream", e.addr)
	if e.nodeID != bootstrapNode {
		ev = ev.Int32("node_id", e.nodeID)
	}
	return ev
}

// probeUntilUp dials e once per backoff interval until a dial succeeds (by
// this probe or by anyone else) or the tracker is closed.
func (h *upstreamHealth) probeUntilUp(e *endpointHealth) {
	defer h.wg.Done()
	for {
		h.mu.Lock()
		if !e.down || h.closed {
			e.probing = false
			h.mu.Unlock()
			return
		}
		wait := e.retryAt.Sub(h.set.now())
		nodeID := e.nodeID
		h.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-h.ctx.Done():
			t.Stop()
			continue // sees closed
		case <-t.C:
		}
		h.record(e.addr, nodeID, h.set.probe(h.ctx, e.addr, nodeID))
	}
}

// goBackground runs fn on a goroutine that close waits for, with a context
// that close cancels; it reports false (and does not run fn) once closed.
func (h *upstreamHealth) goBackground(fn func(ctx context.Context)) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn(h.ctx)
	}()
	return true
}

// close stops probing and background dials and waits for them.
func (h *upstreamHealth) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
}
