package engine

import (
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/kproxy/kproxy/protocol"
)

// sampledLog rate-limits warnings that repeat under one key (a close
// reason), as log.sample says: at most one line per key per interval, the
// next one saying how many it stands for. Safe for concurrent use.
type sampledLog struct {
	interval time.Duration
	mu       sync.Mutex
	byKey    map[string]*logSampler
}

func newSampledLog(interval time.Duration) sampledLog {
	return sampledLog{interval: interval, byKey: map[string]*logSampler{}}
}

// allow reports whether a line for key may be logged now, and how many
// were held back since the last one.
func (l *sampledLog) allow(key string, now time.Time) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, found := l.byKey[key]
	if !found {
		s = &logSampler{interval: l.interval}
		l.byKey[key] = s
	}
	return s.allow(now)
}

// logOpened is the pair's "connection opened" line.
func (p *pair) logOpened() {
	p.logger().Info().Msg("connection opened")
}

// closeEvent is the pair's "connection closed" line at the level reason
// deserves: debug for a routine end that another line already reported,
// info for a routine end, warn for a fault (sampled per reason: see
// sampledLog).
func (p *pair) closeEvent(reason string, err error) *zerolog.Event {
	log := p.logger()
	switch reason {
	case reasonClientClosed, reasonDrained, reasonIdle, reasonUpstreamIdle:
		return log.Info()
	case reasonDial:
		if healthReported(err) { // upstreamHealth logs it, aggregated
			return log.Debug()
		}
	}
	ok, suppressed := p.s.closeLogs.allow(reason, time.Now())
	if !ok {
		return log.Debug()
	}
	ev := log.Warn()
	if suppressed > 0 {
		ev = ev.Int("similar_suppressed", suppressed)
	}
	return ev
}

// logClosed writes the pair's "connection closed" line: why, how long it
// lasted, the bytes of its frames each way, and the last client id.
func (p *pair) logClosed(reason string, err error) {
	ev := p.closeEvent(reason, err)
	if ev == nil {
		return
	}
	if id := p.clientID.Load(); id != nil {
		ev = ev.Str("client_id", *id)
	}
	ev.Str("reason", reason).
		Int64("bytes_in", p.received.Load()).
		Int64("bytes_out", p.sent.Load()).
		Str("duration", durationText(time.Since(p.opened))).
		AnErr("cause", err).
		Msg("connection closed")
}

// requestLog writes a summary of every request at debug level.
type requestLog struct{ log zerolog.Logger }

func (l *requestLog) ObserveRequest(t *RequestTiming) {
	ev := l.log.Debug() // nil, allocating nothing, unless log.level is debug or trace
	if ev == nil {
		return
	}
	ev.Str("listener", t.Listener).Stringer("client", t.Client).
		Str("api", protocol.APIName(t.Key)).Int16("version", t.Version).Int32("correlation_id", t.CorrelationID).
		Str("client_id", t.ClientID).Str("principal", t.Principal).
		Int("request_bytes", t.RequestBytes).Int("response_bytes", t.ResponseBytes).
		Int16("error_code", t.ErrorCode).Bool("local", t.Local).
		Dur("latency", t.Total()).Dur("upstream", t.Upstream()).
		Msg("request")
}
