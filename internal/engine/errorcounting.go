package engine

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/protocol"
)

// answerLocally makes resp, kproxy's own answer, owed's response: its
// frame, its top-level error code (the request's log line, and
// kproxy_response_errors_total once delivered) and its entries' error
// codes, counted now.
func (p *pair) answerLocally(owed *pending, correlationID int32, resp kmsg.Response) {
	owed.local = protocol.AppendResponseFrame(nil, correlationID, resp)
	owed.timing.ErrorCode = topLevelErrorCode(resp)
	p.s.metrics.requests.countEntryErrors(resp)
}

// responseErrorCounter counts the error codes a walk of a response of one
// API passes (wire.ErrorNoter). Each pair keeps one, so that walks
// allocate nothing for it.
type responseErrorCounter struct {
	m *requestMetrics
	s *apiSeries // nil: an API kproxy does not know
}

func (c *responseErrorCounter) NoteError(code int16) {
	if c.s != nil {
		c.m.countError(c.s, code)
	}
}

// countingErrors readies p's error counter for a response of key.
func (p *pair) countingErrors(key int16) *responseErrorCounter {
	m := p.s.metrics.requests
	p.walkErrors = responseErrorCounter{m: m, s: m.series(key)}
	return &p.walkErrors
}

// countWalkedErrors counts the error codes of the buffered response body
// to owed, which is relayed as it came, by a walk of its API (Produce: a
// few bytes per partition), not a decoding. An API without a walk, or a
// version before its flexible encoding, is not counted.
func (p *pair) countWalkedErrors(owed *pending, body []byte) {
	api, ok := protocol.APIs().API(owed.key)
	if !ok {
		return
	}
	_ = p.walkBody.ResponseErrorCodes(api, owed.version, body, p.countingErrors(owed.key)) // relayed as it is either way
}
