package rewrite

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFindCoordinatorErrorAnswersUntouched checks that Kafka's "no node"
// answers (node -1, empty host) and empty-host answers reach the client
// exactly as sent, without consulting the Mapper, while real answers in the
// same response are still rewritten.
func TestFindCoordinatorErrorAnswersUntouched(t *testing.T) {
	const coordinatorNotAvailable = 15
	notAvailable := strp("coordinator not available")

	singles := []struct {
		name   string
		nodeID int32
		host   string
		port   int32
	}{
		{"no node", -1, "", -1},
		{"negative id with port", -1, "", 9092},
		{"empty host", 4, "", 0},
	}
	for v := int16(0); v <= 3; v++ {
		for _, s := range singles {
			t.Run(fmt.Sprintf("v%d/%s", v, s.name), func(t *testing.T) {
				src := kmsg.NewPtrFindCoordinatorResponse()
				src.SetVersion(v)
				src.ErrorCode, src.ErrorMessage = coordinatorNotAvailable, notAvailable
				src.NodeID, src.Host, src.Port = s.nodeID, s.host, s.port
				upstreamBytes, resp := roundTrip(t, src)

				m := &fakeMapper{}
				if err := (Addresses{Mapper: m}).FilterResponse(resp); err != nil {
					t.Fatalf("FilterResponse: %v", err)
				}
				if calls := m.Calls(); len(calls) != 0 {
					t.Fatalf("Mapper consulted for an error answer: %+v", calls)
				}
				if got := resp.AppendTo(nil); !bytes.Equal(got, upstreamBytes) {
					t.Fatalf("error answer changed:\n got %x\nwant %x", got, upstreamBytes)
				}
			})
		}
	}

	for v := int16(4); v <= kmsg.NewPtrFindCoordinatorResponse().MaxVersion(); v++ {
		t.Run(fmt.Sprintf("v%d/batched", v), func(t *testing.T) {
			src := kmsg.NewPtrFindCoordinatorResponse()
			src.SetVersion(v)
			src.Coordinators = []kmsg.FindCoordinatorResponseCoordinator{
				{Key: "ok", NodeID: 1, Host: upstreamHost(1), Port: upstreamPort},
				{Key: "no-node", NodeID: -1, Host: "", Port: -1, ErrorCode: coordinatorNotAvailable, ErrorMessage: notAvailable},
				{Key: "empty-host", NodeID: 5, Host: "", Port: 0, ErrorCode: coordinatorNotAvailable},
				{Key: "ok-too", NodeID: 3, Host: upstreamHost(3), Port: upstreamPort},
			}
			_, resp := roundTrip(t, src)

			m := &fakeMapper{}
			if err := (Addresses{Mapper: m}).FilterResponse(resp); err != nil {
				t.Fatalf("FilterResponse: %v", err)
			}
			wantCalls := []mapperCall{{1, upstreamHost(1), upstreamPort}, {3, upstreamHost(3), upstreamPort}}
			if calls := m.Calls(); fmt.Sprint(calls) != fmt.Sprint(wantCalls) {
				t.Fatalf("Mapper calls = %+v, want %+v", calls, wantCalls)
			}

			_, final := roundTrip(t, resp)
			got := final.(*kmsg.FindCoordinatorResponse).Coordinators
			want := []struct {
				nodeID int32
				host   string
				port   int32
				code   int16
			}{
				{1, proxyHost, proxyPort(1), 0},
				{-1, "", -1, coordinatorNotAvailable},
				{5, "", 0, coordinatorNotAvailable},
				{3, proxyHost, proxyPort(3), 0},
			}
			if len(got) != len(want) {
				t.Fatalf("got %d coordinators, want %d", len(got), len(want))
			}
			for i, w := range want {
				g := got[i]
				if g.NodeID != w.nodeID || g.Host != w.host || g.Port != w.port || g.ErrorCode != w.code {
					t.Errorf("coordinator %d (%s) = {%d %q %d code %d}, want {%d %q %d code %d}",
						i, g.Key, g.NodeID, g.Host, g.Port, g.ErrorCode, w.nodeID, w.host, w.port, w.code)
				}
			}
		})
	}
}

// TestFindCoordinatorOnlyWireFieldsMapped checks that the Mapper is asked
// only about the fields encoded at the response's version: at v4+ the
// top-level fields are not sent, so mapping them would be a pointless (and
// possibly blocking or failing) Mapper call.
func TestFindCoordinatorOnlyWireFieldsMapped(t *testing.T) {
	r := kmsg.NewPtrFindCoordinatorResponse()
	r.SetVersion(4)
	r.NodeID, r.Host, r.Port = 9, upstreamHost(9), upstreamPort // not on the wire at v4
	m := &fakeMapper{failFor: map[int32]error{9: fmt.Errorf("node 9 must not be mapped")}}
	if err := (Addresses{Mapper: m}).FilterResponse(r); err != nil {
		t.Fatalf("FilterResponse: %v", err)
	}
}
