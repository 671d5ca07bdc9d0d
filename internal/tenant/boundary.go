package tenant

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Need says how much of a message the Mapper needs, so the engine decodes
// only what it must.
type Need uint8

const (
	// NeedNothing: the message carries no name; stream it.
	NeedNothing Need = iota
	// NeedRaw: the Mapper rewrites the buffered body without decoding it
	// (MapRawRequest, MapRawResponse).
	NeedRaw
	// NeedDecoded: the Mapper maps the decoded message (MapRequest,
	// MapResponse).
	NeedDecoded
)

// RequestNeed is what the Mapper needs of a request of key at version.
// Keys it refuses are NeedRaw: MapRawRequest refuses them undecoded.
func (m *Mapper) RequestNeed(key, version int16) Need {
	if m.table.isRefused(key) {
		return NeedRaw
	}
	if m.table.scopedFor(key) != nil {
		return NeedDecoded // refused from the decoded request, unless the operator's
	}
	a := m.table.lookup(key)
	switch {
	case a == nil:
		return NeedNothing
	case a.rawRequest != nil && a.rawRequestFor(version):
		return NeedRaw
	case a.request != nil:
		return NeedDecoded
	}
	return NeedNothing
}

// ResponseNeed is what the Mapper needs of every response of key at
// version; a request's mapping may ask for more (MapRequest's mapResponse:
// NeedDecoded).
func (m *Mapper) ResponseNeed(key, version int16) Need {
	a := m.table.lookup(key)
	switch {
	case a == nil || a.response == nil && a.rawResponse == nil:
		return NeedNothing
	case a.responseStreamed != nil && a.responseStreamed(version):
		return NeedNothing
	case a.rawResponse != nil && a.rawResponseFor(version):
		return NeedRaw
	case a.response != nil:
		return NeedDecoded
	}
	return NeedNothing
}

// Streams reports, from prefix (the first bytes of the body of a request
// of key at version, as many as the engine has buffered), that the
// request needs no mapping, so that it may be streamed even though
// RequestNeed is not NeedNothing: a Produce v13+ to one of the tenant's
// topics with no transactional id to prefix. false: map it as RequestNeed
// says.
func (m *Mapper) Streams(ctx context.Context, key, version int16, prefix []byte) bool {
	return key == int16(kmsg.Produce) && produceStreams(ctx, m, version, prefix)
}

// NeedsOperator reports whether the mapping of a request of key depends
// on whether its sender is one of the virtual cluster's cluster operators
// (then the engine passes MapRequest a context from AsClusterOperator for
// theirs): the cluster-scoped keys and the configs APIs, whose broker and
// client metrics resources are the cluster's.
func (m *Mapper) NeedsOperator(key int16) bool {
	switch kmsg.Key(key) {
	case kmsg.DescribeConfigs, kmsg.AlterConfigs, kmsg.IncrementalAlterConfigs:
		return true
	}
	return m.table.scopedFor(key) != nil
}

// MapRawRequest appends to dst the body of a request of key at version
// (RequestNeed NeedRaw) with the tenant's names mapped to the upstream's;
// nil out: the body needs no change, forward it as it is. mapResponse asks for the response decoded and mapped. An error that is
// not an Answer means the request must not be forwarded: close the
// connection.
func (m *Mapper) MapRawRequest(ctx context.Context, key, version int16, body, dst []byte) (out []byte, mapResponse bool, err error) {
	if m.table.isRefused(key) {
		return dst, false, fmt.Errorf("virtual cluster: %s is not for clients of a virtual cluster (it names what kproxy does not map)", kmsg.NameForKey(key))
	}
	a := m.table.lookup(key)
	if a == nil || a.rawRequest == nil || !a.rawRequestFor(version) {
		return dst, false, fmt.Errorf("virtual cluster: no raw mapping of %s v%d", kmsg.NameForKey(key), version)
	}
	return a.rawRequest(ctx, m, version, body, dst)
}

// MapRequest maps a decoded request in place to the upstream's names (any
// version of a key RequestNeed does not answer NeedNothing for).
// mapResponse asks for the response decoded and mapped whatever
// ResponseNeed says. An *Answer error is the client's whole answer; any
// other error means the request must not be forwarded.
func (m *Mapper) MapRequest(ctx context.Context, req kmsg.Request) (mapResponse bool, err error) {
	key := req.Key()
	if m.table.isRefused(key) {
		return false, fmt.Errorf("virtual cluster: %s is not for clients of a virtual cluster (it names what kproxy does not map)", kmsg.NameForKey(key))
	}
	if err := m.refuseClusterScoped(ctx, req); err != nil {
		return false, err
	}
	a := m.table.lookup(key)
	if a == nil || a.request == nil {
		return false, nil
	}
	return a.request(ctx, m, req)
}

// MapRawResponse appends to dst the body of a response of key at version
// (ResponseNeed NeedRaw) with the upstream's names mapped to the tenant's;
// nil: the body needs no change.
func (m *Mapper) MapRawResponse(key, version int16, body, dst []byte) ([]byte, error) {
	a := m.table.lookup(key)
	if a == nil || a.rawResponse == nil || !a.rawResponseFor(version) {
		return dst, fmt.Errorf("virtual cluster: no raw mapping of %s v%d responses", kmsg.NameForKey(key), version)
	}
	return a.rawResponse(m, version, body, dst)
}

// MapResponse maps a decoded response in place to the tenant's names,
// removing what is not the tenant's. req is the request as sent upstream,
// nil when it was mapped raw.
func (m *Mapper) MapResponse(req kmsg.Request, resp kmsg.Response) error {
	a := m.table.lookup(resp.Key())
	if a == nil || a.response == nil {
		return nil
	}
	return a.response(m, req, resp)
}
