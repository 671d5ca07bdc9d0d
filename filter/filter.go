// Package filter is the contract between kproxy's engine and its features.
//
// A feature is a Filter: in Register it names, with typed handlers, the
// requests and responses it wants to see, for example
//
//	func (f myFilter) Register(r *filter.Registry) {
//		filter.OnRequest(r, f.produce)   // f.produce(c *filter.Conn, req *kmsg.ProduceRequest) filter.Verdict
//		filter.OnResponse(r, f.metadata) // f.metadata(resp *kmsg.MetadataResponse) error
//	}
//
// Filters run in one chain, each in a Phase (see Placed and At): requests
// pass the phases from the client's side to the cluster's, responses back,
// and within a phase filters keep the order they were added. For each
// request or response of a key some handler wants, the engine decodes the
// message once, passes it through every handler of that key in that
// order, and encodes it once (only if a handler changed it). Keys no
// handler wants are streamed as raw bytes and cost nothing here.
//
// A filter that operators configure declares its own section of the
// configuration file with a Factory: its typed configuration, checked at
// load and written at the top level or per virtual cluster, from which
// kproxy builds the filter (and, where the factory can, reloads it).
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
	// Claims are the claims of the token the client authenticated with
	// (SASL OAUTHBEARER), nil otherwise: each claim's string values (an
	// array's elements; scope and scp split at spaces; numbers and bools
	// as JSON text; objects left out). A re-authentication replaces the
	// map; handlers must not modify it.
	Claims map[string][]string
	// ClientID is the client.id of the request being filtered.
	ClientID string
	// VirtualCluster is the name of the virtual cluster whose listener
	// accepted the connection (virtual_clusters[].name), "" when the
	// configuration has no virtual_clusters.
	VirtualCluster string
	// Memory is the connection's share of limits.max_buffered_bytes, for
	// a filter that holds data of its own besides the messages the engine
	// charges (a download, say); nil where nothing bounds it. A handler
	// may keep Memory, unlike the Conn, for its response hook.
	Memory Memory
}

// Memory charges bytes a filter holds to the engine's memory budget.
type Memory interface {
	// Acquire charges n bytes, waiting, as the engine's own reads do,
	// until they fit; it fails, charging nothing, when the connection
	// closes meanwhile. A charge larger than the whole budget is granted
	// once nothing else is held.
	Acquire(n int64) error
	// Release gives back n bytes charged with Acquire.
	Release(n int64)
}

// Verdict is a request handler's decision. The zero Verdict forwards the
// request unchanged.
type Verdict struct {
	// Close, when set, closes the connection; the reason is logged. Kafka
	// closes connections for the same kinds of failure (for example a
	// failed produce with acks=0, which has no response to carry an error).
	Close error
	// Respond, when set, is the whole answer: the request never reaches the
	// upstream, and later handlers do not see it. Its version must be the
	// request's.
	Respond kmsg.Response
	// Modified says the handler changed req, which must be re-encoded.
	Modified bool
	// OnResponse, when set, sees the upstream's decoded response to this
	// request before the response handlers and the client do, for example
	// to merge in errors for parts of the request the handler removed.
	// Build it with Then to get the response as its type. An error closes
	// the connection.
	OnResponse func(kmsg.Response) error
	// OnFetchSpliced, when set on a Fetch request's verdict, is a hook as
	// OnResponse, after it, that may put into the response values it
	// streams rather than holds (see Splicer). An error closes the
	// connection.
	OnFetchSpliced func(resp *kmsg.FetchResponse, s *Splicer) error
	// OnShareFetchSpliced is OnFetchSpliced for a ShareFetch request's
	// verdict.
	OnShareFetchSpliced func(resp *kmsg.ShareFetchResponse, s *Splicer) error
	// InspectResponse, when set with OnResponse or a spliced hook, is
	// asked first whether the hooks have work in the response, from its
	// raw body (the bytes after the response header) and version. When it
	// says no, the hooks are not called and, unless a response handler
	// needs it decoded, the response is forwarded as read, with no
	// decoding: a filter's hook for records it rarely meets costs a scan,
	// not a re-encoding. It must not keep body.
	InspectResponse func(version int16, body []byte) bool
	// Release, when set with Modified on a request's verdict, is called
	// once the engine has written the request upstream (or dropped it,
	// answered by a later stage) and nothing reads it any more, so that
	// the handler may reuse buffers it put into it (records it rewrote,
	// which the engine may write from where they are rather than copy). It
	// is not called when a response hook may still read the request, nor
	// when the connection closes first: the buffers are then left to the
	// garbage collector.
	Release func()
}

// Need says how much of a response a handler needs (see NeedByVersion).
type Need uint8

const (
	// Stream: the handler needs nothing from this response.
	Stream Need = iota
	// DropTopLevelTags: the handler needs only that the response's top-level
	// tagged fields never reach the client unseen, and accepts losing them.
	// The engine streams the response and, if that final section is not
	// empty, sends filler of the same length in its place: the size was
	// already sent. Supported for Produce and Fetch, where KIP-951 leader
	// endpoints live there; anywhere else it means Decode. Where the
	// response is buffered anyway, the handler is asked as for Inspect.
	DropTopLevelTags
	// Inspect: the handler needs the raw body first, to say (with the
	// function given to InspectRaw) whether it must be decoded. The engine
	// buffers the frame, which costs a copy but no decoding.
	Inspect
	// Decode: the handler needs every such response decoded.
	Decode
)
