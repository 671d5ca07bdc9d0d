// Package filter is the contract between kproxy's engine and its features.
//
// A feature is a filter that declares which API keys it wants to see
// decoded. For each request or response of such a key the engine decodes
// the message once, passes it through every interested filter in order, and
// encodes it once (only if a filter changed it). Keys no filter wants are
// streamed as raw bytes and cost nothing here.
package filter

import (
	"net/netip"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Conn is what a filter knows about the client connection a message
// belongs to. The engine owns it; filters must not keep it past the call.
type Conn struct {
	// ID is unique per connection for the life of the process.
	ID uint64
	// Listener names the listener that accepted the connection
	// ("bootstrap" or "node-N").
	Listener string
	// Client is the client's address.
	Client netip.AddrPort
	// User is the authenticated user name, "" while anonymous.
	User string
	// CertCN and CertSANs come from a verified client certificate, if any.
	CertCN   string
	CertSANs []string
	// ClientID is the client.id of the request being filtered.
	ClientID string
}

// ResponseFilter wants some responses decoded.
type ResponseFilter interface {
	// ResponseKeys lists the API keys whose responses this filter must see.
	ResponseKeys() []int16
	// FilterResponse mutates resp in place. resp is re-encoded at its own
	// version, normally the one the client asked for.
	FilterResponse(resp kmsg.Response) error
}

// RequestFilter wants some requests decoded before they go upstream.
type RequestFilter interface {
	// RequestKeys lists the API keys whose requests this filter must see.
	RequestKeys() []int16
	// FilterRequest inspects req, which conn sent, and may change it.
	//
	// req's strings and byte slices alias the frame it was decoded from,
	// which the engine reuses for a later request once this one is
	// forwarded or answered. Only a Verdict.OnResponse hook may keep req
	// (the engine then leaves the frame alone); anything else that outlives
	// the call (a log line written later, a cache) must copy what it keeps.
	FilterRequest(conn *Conn, req kmsg.Request) Verdict
}

// Verdict is a request filter's decision. The zero Verdict forwards the
// request unchanged.
type Verdict struct {
	// Close, when set, closes the connection; the reason is logged. Kafka
	// closes connections for the same kinds of failure (for example a
	// failed produce with acks=0, which has no response to carry an error).
	Close error
	// Respond, when set, is the whole answer: the request never reaches the
	// upstream, and later filters do not see it. Its version must be the
	// request's.
	Respond kmsg.Response
	// Modified says the filter changed req, which must be re-encoded.
	Modified bool
	// OnResponse, when set, sees the upstream's decoded response to this
	// request before the response filters and the client do, for example to
	// merge in errors for parts of the request the filter removed.
	OnResponse func(kmsg.Response) error
}

// Need says how much of a response a filter needs.
type Need uint8

const (
	// Stream: the filter needs nothing from this response.
	Stream Need = iota
	// DropTopLevelTags: the filter needs only that the response's top-level
	// tagged fields never reach the client unseen, and accepts losing them.
	// The engine streams the response and, if that final section is not
	// empty, sends filler of the same length in its place: the size was
	// already sent. Supported for Produce and Fetch, where KIP-951 leader
	// endpoints live there; anywhere else it means Decode. Where the
	// response is buffered anyway, the filter is asked as for Inspect.
	DropTopLevelTags
	// Inspect: the filter needs the raw body first, to say via
	// InspectResponse whether it must be decoded. The engine buffers the
	// frame, which costs a copy but no decoding.
	Inspect
	// Decode: the filter needs every such response decoded.
	Decode
)

// ResponseSelector is implemented by response filters that need only some
// versions of their keys, or only some responses, so that the rest keep the
// zero-copy path. A ResponseFilter without it needs every response to its
// keys decoded.
type ResponseSelector interface {
	// ResponseNeed says what the filter needs from responses to version of
	// key. It must depend only on its arguments: the engine asks once.
	ResponseNeed(key, version int16) Need
	// InspectResponse reports whether body, the bytes after the response
	// header, must be decoded for this filter. Called only for versions
	// where ResponseNeed said Inspect; must not keep body.
	InspectResponse(key, version int16, body []byte) bool
}
