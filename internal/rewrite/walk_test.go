package rewrite

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// endpoint is one address found in a response, wherever it lives.
type endpoint struct {
	Where  string
	NodeID int32
	Host   string
	Port   int32
}

// endpointsOf lists every address resp carries on the wire at its version.
// It is written independently of the filter on purpose: a field the filter
// forgets is still found here, and the test fails.
func endpointsOf(t testing.TB, resp kmsg.Response) []endpoint {
	t.Helper()
	var out []endpoint
	add := func(where string, id int32, host string, port int32) {
		out = append(out, endpoint{where, id, host, port})
	}
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		for _, b := range r.Brokers {
			add("Brokers", b.NodeID, b.Host, b.Port)
		}
	case *kmsg.FindCoordinatorResponse:
		if r.Version <= 3 {
			add("top-level", r.NodeID, r.Host, r.Port)
		}
		for _, c := range r.Coordinators {
			add("Coordinators", c.NodeID, c.Host, c.Port)
		}
	case *kmsg.DescribeClusterResponse:
		for _, b := range r.Brokers {
			add("Brokers", b.NodeID, b.Host, b.Port)
		}
	case *kmsg.ProduceResponse:
		for _, b := range r.Brokers {
			add("Brokers", b.NodeID, b.Host, b.Port)
		}
	case *kmsg.FetchResponse:
		for _, b := range r.Brokers {
			add("Brokers", b.NodeID, b.Host, b.Port)
		}
	case *kmsg.ShareFetchResponse:
		for _, e := range r.NodeEndpoints {
			add("NodeEndpoints", e.NodeID, e.Host, e.Port)
		}
	case *kmsg.ShareAcknowledgeResponse:
		for _, e := range r.NodeEndpoints {
			add("NodeEndpoints", e.NodeID, e.Host, e.Port)
		}
	case *kmsg.DescribeQuorumResponse:
		for _, n := range r.Nodes {
			for _, l := range n.Listeners {
				add("Nodes.Listeners", n.NodeID, l.Host, int32(l.Port))
			}
		}
	default:
		t.Fatalf("endpointsOf: no walker for %T", resp)
	}
	return out
}

// roundTrip encodes resp at its version and decodes the bytes into a fresh
// response of the same key, as the proxy does with upstream bytes. It returns
// the bytes and the decoded response.
func roundTrip(t testing.TB, resp kmsg.Response) ([]byte, kmsg.Response) {
	t.Helper()
	b := resp.AppendTo(nil)
	fresh := kmsg.ResponseForKey(resp.Key())
	fresh.SetVersion(resp.GetVersion())
	if err := fresh.ReadFrom(b); err != nil {
		t.Fatalf("decode %s v%d: %v", kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
	}
	return b, fresh
}
