package rewrite

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/protocol"
)

// endpoint is one address found in a response, wherever it lives.
type endpoint struct {
	Where  string
	NodeID int32
	Host   string
	Port   int32
}

// endpointsOf lists every address resp carries on the wire at its version,
// where the API table says they are. The table is checked against kmsg's
// types independently (protocol's TestEndpointRowsFindEveryHost), and the
// tests here check the bytes for upstream hosts, so a field the table
// forgets still fails a test.
func endpointsOf(t testing.TB, resp kmsg.Response) []endpoint {
	t.Helper()
	api, ok := protocol.APIs().API(resp.Key())
	if !ok || !api.HasEndpoints() {
		t.Fatalf("endpointsOf: the API table has no endpoints for %T", resp)
	}
	var out []endpoint
	err := api.VisitEndpoints(resp, func(e protocol.Endpoint) error {
		out = append(out, endpoint{e.Field, e.NodeID, *e.Host, e.Port.Get()})
		return nil
	})
	if err != nil {
		t.Fatalf("endpointsOf: %v", err)
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
