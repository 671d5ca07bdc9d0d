package filter

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Filter is a feature of the proxy. The engine calls Register once, before
// serving, with the Registry that filter's handlers go into.
type Filter interface {
	Register(r *Registry)
}

// Registry collects the handlers filters register, in order. The engine
// makes one, passes it to every Filter's Register, and dispatches by what
// Requests and Responses return; filters only add to it.
type Registry struct {
	requests  []RequestHandler
	responses []ResponseHandler
	errs      []error
	// phase is the phase of the filter Add is registering; links are the
	// filters Add registered.
	phase Phase
	links []Link
}

// RequestHandler is a registered request handler as the engine runs it.
type RequestHandler struct {
	Key int16
	// Phase is the phase of the filter that registered it.
	Phase Phase
	// Handle decides a decoded request of Key.
	Handle func(c *Conn, req kmsg.Request) Verdict
	// DecideRaw, when set, is asked first, with the raw body (see the
	// option of the same name).
	DecideRaw func(c *Conn, version int16, body []byte) (v Verdict, decided bool)
}

// ResponseHandler is a registered response handler as the engine runs it.
type ResponseHandler struct {
	Key int16
	// Phase is the phase of the filter that registered it.
	Phase Phase
	// Handle changes a decoded response of Key in place.
	Handle func(resp kmsg.Response) error
	// HandleReleasing, set instead of Handle (OnResponseReleasing), also
	// returns what to call once nothing reads the response any more.
	HandleReleasing func(resp kmsg.Response) (release func(), err error)
	// Need, when set, says what Handle needs per version; unset means
	// Decode for every version.
	Need func(version int16) Need
	// InspectRaw, when set, says for a version Need answered Inspect (or
	// DropTopLevelTags on a buffered response) whether the raw body must be
	// decoded; unset means it must.
	InspectRaw func(version int16, body []byte) bool
}

// Run calls the handler, Handle or HandleReleasing, with resp. release,
// when not nil, is for the engine to call once it has written resp or
// given up on it.
func (h ResponseHandler) Run(resp kmsg.Response) (release func(), err error) {
	if h.HandleReleasing != nil {
		return h.HandleReleasing(resp)
	}
	return nil, h.Handle(resp)
}

// Requests is every request handler registered, in the order requests
// pass them: by ascending phase, then in registration order.
func (r *Registry) Requests() []RequestHandler {
	hs := slices.Clone(r.requests)
	slices.SortStableFunc(hs, func(a, b RequestHandler) int { return cmp.Compare(a.Phase, b.Phase) })
	return hs
}

// Responses is every response handler registered, in the order responses
// pass them: by descending phase, then in registration order.
func (r *Registry) Responses() []ResponseHandler {
	hs := slices.Clone(r.responses)
	slices.SortStableFunc(hs, func(a, b ResponseHandler) int { return cmp.Compare(b.Phase, a.Phase) })
	return hs
}

// Err reports registrations that could not be honoured (a handler whose
// type names no API key). The engine refuses to start on it.
func (r *Registry) Err() error { return errors.Join(r.errs...) }

// RequestOption refines a request handler.
type RequestOption func(*RequestHandler)

// DecideRaw lets a handler decide a request from its raw bytes, so that the
// engine need not decode it: a policy that allows a produce needs its topic
// names, not kmsg structs of its partitions.
//
// While no earlier handler of the key has had the request decoded, the
// engine calls decide with body, the bytes after the request header, and
// version. When it returns decided, v is the handler's verdict and the
// typed handler is not called; otherwise the engine decodes the request and
// calls it as usual. A decided verdict may forward (the zero Verdict),
// Close or Respond; it must not set Modified or a response hook, which need a
// decoded request (the engine calls the typed handler if it does). decide
// must not keep body or c past the call, nor change body.
func DecideRaw(decide func(c *Conn, version int16, body []byte) (v Verdict, decided bool)) RequestOption {
	return func(h *RequestHandler) { h.DecideRaw = decide }
}

// ResponseOption refines a response handler.
type ResponseOption func(*ResponseHandler)

// NeedByVersion says what the handler needs from responses of each version
// of its key, so that versions it has no business with keep the zero-copy
// path. need must depend only on version: the engine asks once per version,
// before serving. Without this option every response of the key is
// decoded.
func NeedByVersion(need func(version int16) Need) ResponseOption {
	return func(h *ResponseHandler) { h.Need = need }
}

// InspectRaw says, for versions NeedByVersion answered Inspect, whether
// body (the bytes after the response header) must be decoded for this
// handler. wants must not keep body.
func InspectRaw(wants func(version int16, body []byte) bool) ResponseOption {
	return func(h *ResponseHandler) { h.InspectRaw = wants }
}

// OnRequest registers h for requests of R's API key, decoded as R (for
// example *kmsg.ProduceRequest), after the request handlers registered
// before it.
//
// req's strings and byte slices alias the frame it was decoded from, which
// the engine reuses for a later request once this one is forwarded or
// answered. Only a Verdict.OnResponse hook may keep req (the engine then
// leaves the frame alone); anything else that outlives the call (a log line
// written later, a cache) must copy what it keeps. c is the engine's: h
// must not keep it past the call.
func OnRequest[R kmsg.Request](r *Registry, h func(c *Conn, req R) Verdict, opts ...RequestOption) {
	key, ok := keyOf[R]()
	if !ok {
		r.errs = append(r.errs, fmt.Errorf("filter.OnRequest: %T names no API key: register a concrete request type such as *kmsg.ProduceRequest", h))
		return
	}
	OnRequestKey(r, key, func(c *Conn, req kmsg.Request) Verdict {
		typed, ok := req.(R)
		if !ok {
			return Verdict{Close: wrongType(h, req)}
		}
		return h(c, typed)
	}, opts...)
}

// OnResponse registers h for responses of R's API key, decoded as R (for
// example *kmsg.MetadataResponse), after the response handlers registered
// before it. h changes resp in place; it is re-encoded at its own version,
// normally the one the client asked for. An error closes the connection.
func OnResponse[R kmsg.Response](r *Registry, h func(resp R) error, opts ...ResponseOption) {
	key, ok := keyOf[R]()
	if !ok {
		r.errs = append(r.errs, fmt.Errorf("filter.OnResponse: %T names no API key: register a concrete response type such as *kmsg.MetadataResponse", h))
		return
	}
	OnResponseKey(r, key, Then(h), opts...)
}

// OnResponseReleasing is OnResponse for a handler that puts buffers of
// its own into resp (records it rewrote, say) and wants them back: the
// release it returns, when not nil, is called once the engine has written
// the response to the client, or given up on it (the connection closed),
// and nothing reads resp any more. A response the engine keeps (its
// ApiVersions cache) is never released: its buffers go to the garbage
// collector.
func OnResponseReleasing[R kmsg.Response](r *Registry, h func(resp R) (release func(), err error), opts ...ResponseOption) {
	key, ok := keyOf[R]()
	if !ok {
		r.errs = append(r.errs, fmt.Errorf("filter.OnResponseReleasing: %T names no API key: register a concrete response type such as *kmsg.FetchResponse", h))
		return
	}
	rh := ResponseHandler{Key: key, Phase: r.currentPhase(), HandleReleasing: func(resp kmsg.Response) (func(), error) {
		typed, ok := resp.(R)
		if !ok {
			return nil, wrongType(h, resp)
		}
		return h(typed)
	}}
	for _, opt := range opts {
		opt(&rh)
	}
	r.responses = append(r.responses, rh)
}

// OnRequestKey is OnRequest for a handler that treats requests of many
// keys alike (a cluster-wide check, say) and so takes them untyped: req is
// whatever kmsg type key decodes to.
func OnRequestKey(r *Registry, key int16, h func(c *Conn, req kmsg.Request) Verdict, opts ...RequestOption) {
	rh := RequestHandler{Key: key, Phase: r.currentPhase(), Handle: h}
	for _, opt := range opts {
		opt(&rh)
	}
	r.requests = append(r.requests, rh)
}

// OnResponseKey is OnResponse for a handler that treats responses of many
// keys alike and so takes them untyped.
func OnResponseKey(r *Registry, key int16, h func(resp kmsg.Response) error, opts ...ResponseOption) {
	rh := ResponseHandler{Key: key, Phase: r.currentPhase(), Handle: h}
	for _, opt := range opts {
		opt(&rh)
	}
	r.responses = append(r.responses, rh)
}

// Then makes hook, which takes a response as its type R, a
// Verdict.OnResponse hook: the type is checked once, here, and a response
// of another type is an error (which closes the connection), never a
// panic.
func Then[R kmsg.Response](hook func(resp R) error) func(kmsg.Response) error {
	return func(resp kmsg.Response) error {
		typed, ok := resp.(R)
		if !ok {
			return wrongType(hook, resp)
		}
		return hook(typed)
	}
}

// keyOf is the API key of R, a kmsg pointer type (whose Key method works on
// nil); false when R is an interface type, which names no key.
func keyOf[R interface{ Key() int16 }]() (int16, bool) {
	var zero R
	if any(zero) == nil {
		return 0, false
	}
	return zero.Key(), true
}

// wrongType is the error of a handler given a message of another type
// than it takes: a bug in whoever dispatched it, reported, not panicked.
func wrongType(handler any, got any) error {
	return fmt.Errorf("filter: handler %T given %T", handler, got)
}
