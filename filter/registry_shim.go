package filter

// TEMPORARY (branch server): a stand-in for the typed filter API that
// the filterapi branch implements, so that the public embedding package
// and examples/requireheader compile and run against today's engine.
// Delete this file when merging filterapi; nothing outside server/
// uses the adapter methods below.

import "github.com/twmb/franz-go/pkg/kmsg"

// Filter is a feature: it registers typed handlers.
type Filter interface{ Register(r *Registry) }

// Registry collects the handlers of filters.
type Registry struct {
	requests  map[int16][]func(*Conn, kmsg.Request) Verdict
	responses map[int16][]func(kmsg.Response) error
}

// RequestOption and ResponseOption refine a handler (none in the stand-in).
type (
	RequestOption  struct{}
	ResponseOption struct{}
)

// OnRequest makes h see every request of R's API key.
func OnRequest[R kmsg.Request](r *Registry, h func(c *Conn, req R) Verdict, _ ...RequestOption) {
	var zero R
	if r.requests == nil {
		r.requests = map[int16][]func(*Conn, kmsg.Request) Verdict{}
	}
	r.requests[zero.Key()] = append(r.requests[zero.Key()], func(c *Conn, req kmsg.Request) Verdict { return h(c, req.(R)) })
}

// OnResponse makes h see every response of R's API key.
func OnResponse[R kmsg.Response](r *Registry, h func(resp R) error, _ ...ResponseOption) {
	var zero R
	if r.responses == nil {
		r.responses = map[int16][]func(kmsg.Response) error{}
	}
	r.responses[zero.Key()] = append(r.responses[zero.Key()], func(resp kmsg.Response) error { return h(resp.(R)) })
}

// Then types a Verdict.OnResponse hook.
func Then[R kmsg.Response](hook func(R) error) func(kmsg.Response) error {
	return func(resp kmsg.Response) error { return hook(resp.(R)) }
}

// RequestKeys, FilterRequest, ResponseKeys and FilterResponse adapt the
// registry to today's RequestFilter and ResponseFilter.
func (r *Registry) RequestKeys() []int16 { return keys(r.requests) }

func (r *Registry) FilterRequest(c *Conn, req kmsg.Request) Verdict {
	for _, h := range r.requests[req.Key()] {
		if v := h(c, req); v.Close != nil || v.Respond != nil || v.Modified || v.OnResponse != nil {
			return v
		}
	}
	return Verdict{}
}

func (r *Registry) ResponseKeys() []int16 { return keys(r.responses) }

func (r *Registry) FilterResponse(resp kmsg.Response) error {
	for _, h := range r.responses[resp.Key()] {
		if err := h(resp); err != nil {
			return err
		}
	}
	return nil
}

func keys[V any](m map[int16]V) []int16 {
	ks := make([]int16, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
