package rewrite

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/protocol"
)

// Addresses is a response filter that replaces every upstream broker address a
// response carries with the address Mapper hands out for that node, so that
// clients keep connecting through kproxy instead of going around it. Where
// the addresses are, and which ones are removed instead (DescribeQuorum's
// controller listeners), is the API table's knowledge: Addresses serves
// every row with endpoints.
//
// The contract is all-or-nothing: if Mapper fails for any node the whole
// FilterResponse call fails, and the caller must not forward the (partially
// rewritten) response. Leaking one upstream address is enough for a client to
// bypass the proxy for good, so there is no best effort.
//
// Addresses holds no state of its own; it is safe for concurrent use when
// Mapper is.
type Addresses struct {
	Mapper BrokerMapper
	// APIs is the table the filter works from; nil means protocol.APIs().
	APIs *protocol.APITable
}

func (a Addresses) apis() *protocol.APITable {
	if a.APIs == nil {
		return protocol.APIs()
	}
	return a.APIs
}

// ResponseKeys returns the API keys of every response kind the table says
// carries a broker (or controller) address: today Produce(0), Fetch(1),
// Metadata(3), FindCoordinator(10), DescribeQuorum(55), DescribeCluster(60),
// ShareFetch(78) and ShareAcknowledge(79).
//
// A new slice is returned on each call so callers may keep or modify it.
func (a Addresses) ResponseKeys() []int16 { return a.apis().EndpointKeys() }

// FilterResponse rewrites, in place, every broker address in resp. resp must
// be the table's response type for one of the keys listed by ResponseKeys;
// any other type is an error, because silently passing through a response
// we were asked to sanitize could leak addresses.
//
// Kafka's "no node" placeholders (a failed coordinator lookup) carry no
// address and are left exactly as the upstream sent them, for the client to
// see the error: asking the Mapper about node -1 would at best fail the
// whole response and at worst open a listener for a node that does not
// exist.
//
// On error resp may be partially rewritten and must be discarded.
func (a Addresses) FilterResponse(resp kmsg.Response) error {
	if a.Mapper == nil {
		return errors.New("rewrite: Addresses has no Mapper")
	}
	if resp == nil {
		return errors.New("rewrite: addresses: nil response")
	}
	api, ok := a.apis().API(resp.Key())
	if !ok || !api.HasEndpoints() {
		return fmt.Errorf("rewrite: addresses: unsupported response type %T", resp)
	}
	if api.StripEndpoints != nil {
		return api.StripEndpoints(resp)
	}
	m := a.Mapper
	err := api.VisitEndpoints(resp, func(e protocol.Endpoint) error {
		if e.NoNode {
			return nil
		}
		host, port, err := m.MapBroker(e.NodeID, *e.Host, e.Port.Get())
		if err != nil {
			return fmt.Errorf("broker %d: %w", e.NodeID, err)
		}
		*e.Host = host
		return e.Port.Set(port)
	})
	if err != nil {
		return fmt.Errorf("rewrite %s %w", api.Name, err)
	}
	return nil
}
