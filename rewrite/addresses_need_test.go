package rewrite

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

func TestAddressesResponseNeed(t *testing.T) {
	a := Addresses{}
	tests := []struct {
		key, version int16
		want         filter.Need
	}{
		{wire.ProduceKey, 8, filter.Stream},
		{wire.ProduceKey, 9, filter.Inspect}, // flexible: kfake sends endpoints
		{wire.ProduceKey, 10, filter.Inspect},
		{wire.FetchKey, 11, filter.Stream},
		{wire.FetchKey, 12, filter.DropTopLevelTags}, // flexible: kfake sends endpoints
		{wire.FetchKey, 16, filter.DropTopLevelTags},
		{wire.MetadataKey, 0, filter.Decode},
		{wire.FindCoordinatorKey, 6, filter.Decode},
	}
	for _, tt := range tests {
		if got := a.ResponseNeed(tt.key, tt.version); got != tt.want {
			t.Errorf("%s v%d: need %d, want %d", protocol.APIName(tt.key), tt.version, got, tt.want)
		}
	}
}

// Inspection must send every response that carries leader endpoints to be
// decoded and rewritten, and let the others through untouched.
func TestAddressesInspectFindsLeaderEndpoints(t *testing.T) {
	a := Addresses{}
	for v := int16(12); v <= protocol.MaxVersion(wire.FetchKey); v++ {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(v)
		resp.Topics = []kmsg.FetchResponseTopic{{Topic: "t", Partitions: []kmsg.FetchResponseTopicPartition{{RecordBatches: make([]byte, 64)}}}}
		if a.InspectResponse(wire.FetchKey, v, resp.AppendTo(nil)) {
			t.Errorf("fetch v%d without endpoints: asked to decode", v)
		}
		resp.Brokers = []kmsg.FetchResponseBroker{{NodeID: 1, Host: "10.9.8.1", Port: 9092}}
		if !a.InspectResponse(wire.FetchKey, v, resp.AppendTo(nil)) {
			t.Errorf("fetch v%d with endpoints: not asked to decode", v)
		}
	}
	for v := int16(9); v <= protocol.MaxVersion(wire.ProduceKey); v++ {
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(v)
		resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{BaseOffset: 3}}}}
		if a.InspectResponse(wire.ProduceKey, v, resp.AppendTo(nil)) {
			t.Errorf("produce v%d without endpoints: asked to decode", v)
		}
		resp.Brokers = []kmsg.ProduceResponseBroker{{NodeID: 1, Host: "10.9.8.1", Port: 9092}}
		if !a.InspectResponse(wire.ProduceKey, v, resp.AppendTo(nil)) {
			t.Errorf("produce v%d with endpoints: not asked to decode", v)
		}
	}
	if !a.InspectResponse(wire.FetchKey, 16, []byte{1, 2, 3}) {
		t.Error("an unparsable body must be decoded (to fail loudly), not relayed")
	}
}
