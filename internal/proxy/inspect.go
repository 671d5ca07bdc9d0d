package proxy

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/protocol"
)

// inspectRequest asks f to decide the request from its raw body, when f is
// a filter.RequestInspector. decided is false when the request must be
// decoded for f, including when f broke the contract by asking for a
// change or a response hook without a decoded request.
func (p *pair) inspectRequest(f filter.RequestFilter, h protocol.RequestHeader, body []byte) (v filter.Verdict, decided bool) {
	in, ok := f.(filter.RequestInspector)
	if !ok {
		return filter.Verdict{}, false
	}
	v, decided = in.InspectRequest(&p.conn, h.APIKey, h.APIVersion, body)
	if !decided || v.Modified || v.OnResponse != nil {
		return filter.Verdict{}, false
	}
	return v, true
}
