package rewrite

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// addressCase describes one response kind Addresses must handle.
type addressCase struct {
	key   int16
	build func() kmsg.Response
	// carried is how many upstream addresses survive encoding at version v:
	// the count the round trip must find before filtering.
	carried func(v int16) int
	// cleared is true when the filter removes the addresses instead of
	// mapping them (DescribeQuorum listeners).
	cleared bool
}

func always(n int) func(int16) int { return func(int16) int { return n } }

// from returns n for versions >= first and 0 below.
func from(first int16, n int) func(int16) int {
	return func(v int16) int {
		if v >= first {
			return n
		}
		return 0
	}
}

// addressCases covers every key in Addresses.ResponseKeys (checked by
// TestAddressesResponseKeys).
var addressCases = []addressCase{
	{key: 3, build: buildMetadata, carried: always(3)},
	{key: 10, build: buildFindCoordinator, carried: func(v int16) int {
		if v <= 3 {
			return 1 // top-level NodeID/Host/Port
		}
		return 3 // Coordinators
	}},
	{key: 60, build: buildDescribeCluster, carried: always(3)},
	// kmsg writes the KIP-951 tag whenever the version is flexible (Produce
	// v9+, Fetch v12+), even though Kafka only defines it from v10 / v16.
	// Expecting exactly that makes the test notice if a kmsg upgrade starts
	// dropping it, which would otherwise make the leak check vacuous.
	{key: 0, build: buildProduce, carried: from(9, 3)},
	{key: 1, build: buildFetch, carried: from(12, 3)},
	{key: 78, build: buildShareFetch, carried: always(3)},
	{key: 79, build: buildShareAcknowledge, carried: always(3)},
	{key: 55, build: buildDescribeQuorum, carried: from(2, 3), cleared: true},
}

func (c addressCase) name() string { return kmsg.NameForKey(c.key) }

// versions returns 0..MaxVersion for the case's response.
func (c addressCase) versions() []int16 {
	var vs []int16
	for v := int16(0); v <= c.build().MaxVersion(); v++ {
		vs = append(vs, v)
	}
	return vs
}

func TestAddressesResponseKeys(t *testing.T) {
	got := Addresses{}.ResponseKeys()
	var want []int16
	for _, c := range addressCases {
		want = append(want, c.key)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("ResponseKeys() = %v, want %v", got, want)
	}
	// Every advertised key must be accepted by FilterResponse; otherwise the
	// engine would route a response to us that we then fail.
	for _, k := range got {
		resp := kmsg.ResponseForKey(k)
		if err := (Addresses{Mapper: &fakeMapper{}}).FilterResponse(resp); err != nil {
			t.Errorf("FilterResponse(empty %s) = %v, want nil", kmsg.NameForKey(k), err)
		}
	}
}

// TestAddressesRewriteAllVersions is the main property: for every response
// kind and every version kmsg knows, after decode → filter → encode no
// upstream address is left anywhere in the bytes, and every address the
// client sees is the one the Mapper gave for that node.
func TestAddressesRewriteAllVersions(t *testing.T) {
	for _, c := range addressCases {
		for _, v := range c.versions() {
			t.Run(fmt.Sprintf("%s/v%d", c.name(), v), func(t *testing.T) {
				src := c.build()
				src.SetVersion(v)
				upstreamBytes, resp := roundTrip(t, src)

				before := endpointsOf(t, resp)
				if len(before) != c.carried(v) {
					t.Fatalf("decoded %d upstream addresses, want %d: %+v", len(before), c.carried(v), before)
				}
				// Guard against a vacuous leak check below.
				if hasUpstream := bytes.Contains(upstreamBytes, []byte(upstreamPrefix)); hasUpstream != (len(before) > 0) {
					t.Fatalf("upstream bytes contain %q: %v, want %v", upstreamPrefix, hasUpstream, len(before) > 0)
				}

				m := &fakeMapper{}
				if err := (Addresses{Mapper: m}).FilterResponse(resp); err != nil {
					t.Fatalf("FilterResponse: %v", err)
				}
				checkMapperCalls(t, m.Calls(), before, c.cleared)

				finalBytes, final := roundTrip(t, resp)
				if bytes.Contains(finalBytes, []byte(upstreamPrefix)) {
					t.Fatalf("rewritten bytes still contain upstream host %q:\n%q", upstreamPrefix, finalBytes)
				}
				after := endpointsOf(t, final)
				if c.cleared {
					if len(after) != 0 {
						t.Fatalf("addresses left after clearing: %+v", after)
					}
					return
				}
				checkRewritten(t, before, after)
			})
		}
	}
}

// checkMapperCalls asserts the Mapper was asked exactly about the decoded
// upstream addresses, with the upstream's values.
func checkMapperCalls(t *testing.T, calls []mapperCall, before []endpoint, cleared bool) {
	t.Helper()
	if cleared {
		if len(calls) != 0 {
			t.Fatalf("Mapper called %d times for a cleared field: %+v", len(calls), calls)
		}
		return
	}
	if len(calls) != len(before) {
		t.Fatalf("Mapper called %d times, want %d: %+v", len(calls), len(before), calls)
	}
	for i, c := range calls {
		want := mapperCall{before[i].NodeID, before[i].Host, before[i].Port}
		if c != want {
			t.Errorf("Mapper call %d = %+v, want %+v", i, c, want)
		}
	}
}

// checkRewritten asserts after holds the same nodes, in order, as before,
// each with the fake Mapper's address.
func checkRewritten(t *testing.T, before, after []endpoint) {
	t.Helper()
	if len(after) != len(before) {
		t.Fatalf("got %d addresses after rewrite, want %d: %+v", len(after), len(before), after)
	}
	for i, e := range after {
		want := endpoint{before[i].Where, before[i].NodeID, proxyHost, proxyPort(before[i].NodeID)}
		if e != want {
			t.Errorf("address %d = %+v, want %+v", i, e, want)
		}
	}
}

// TestAddressesOnlyAddressesChange checks the filter touches nothing but
// addresses: with a Mapper that hands back the upstream address unchanged,
// the re-encoded response is byte-for-byte the upstream one.
func TestAddressesOnlyAddressesChange(t *testing.T) {
	for _, c := range addressCases {
		for _, v := range c.versions() {
			if c.cleared && c.carried(v) > 0 {
				continue // clearing is a change by design; see the quorum test
			}
			t.Run(fmt.Sprintf("%s/v%d", c.name(), v), func(t *testing.T) {
				src := c.build()
				src.SetVersion(v)
				upstreamBytes, resp := roundTrip(t, src)
				if err := (Addresses{Mapper: identityMapper{}}).FilterResponse(resp); err != nil {
					t.Fatalf("FilterResponse: %v", err)
				}
				if got := resp.AppendTo(nil); !bytes.Equal(got, upstreamBytes) {
					t.Fatalf("identity rewrite changed bytes:\n got %x\nwant %x", got, upstreamBytes)
				}
			})
		}
	}
}

// identityMapper hands back the upstream address.
type identityMapper struct{}

func (identityMapper) MapBroker(_ int32, host string, port int32) (string, int32, error) {
	return host, port, nil
}
