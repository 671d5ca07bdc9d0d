package engine

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/protocol"
)

// decideRaw asks h to decide the request from its raw body, when h has a
// filter.DecideRaw option. decided is false when the request must be
// decoded for h, including when h broke the contract by asking for a
// change or a response hook without a decoded request.
func (p *pair) decideRaw(h filter.RequestHandler, hdr protocol.RequestHeader, body []byte) (v filter.Verdict, decided bool) {
	if h.DecideRaw == nil {
		return filter.Verdict{}, false
	}
	v, decided = h.DecideRaw(&p.conn, hdr.APIVersion, body)
	if !decided || v.Modified || v.OnResponse != nil || v.OnFetchSpliced != nil || v.OnShareFetchSpliced != nil {
		return filter.Verdict{}, false
	}
	return v, true
}

// inspectWants asks the response handlers of a buffered response whether
// any of them needs it decoded.
func inspectWants(handlers []filter.ResponseHandler, version int16, body []byte) bool {
	for _, h := range handlers {
		if h.Need == nil {
			return true
		}
		switch h.Need(version) {
		case filter.Decode:
			return true
		case filter.Inspect, filter.DropTopLevelTags:
			if h.InspectRaw == nil || h.InspectRaw(version, body) {
				return true
			}
		}
	}
	return false
}
