package rewrite

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// Register gives the engine one handler per key of ResponseKeys, whose
// per-version need and raw inspection are the key's own, and which
// rewrites that key's responses.
func TestAddressesRegister(t *testing.T) {
	a := Addresses{Mapper: &fakeMapper{}}
	var reg filter.Registry
	a.Register(&reg)
	keys := a.ResponseKeys()
	hs := reg.Responses()
	if len(hs) != len(keys) || len(reg.Requests()) != 0 {
		t.Fatalf("registered %d response and %d request handlers, want %d and 0", len(hs), len(reg.Requests()), len(keys))
	}
	for i, h := range hs {
		if h.Key != keys[i] || h.Need == nil || h.InspectRaw == nil {
			t.Fatalf("handler %d: key %d (need set %v, inspect set %v), want key %d with both", i, h.Key, h.Need != nil, h.InspectRaw != nil, keys[i])
		}
		for v := int16(0); v <= protocol.MaxVersion(h.Key); v++ {
			if got, want := h.Need(v), a.ResponseNeed(h.Key, v); got != want {
				t.Errorf("%s v%d: need %d, want %d", protocol.APIName(h.Key), v, got, want)
			}
		}
		if err := h.Handle(kmsg.ResponseForKey(h.Key)); err != nil {
			t.Errorf("%s: %v", protocol.APIName(h.Key), err)
		}
	}
	// The raw inspection is the key's: a flexible Produce body with no
	// top-level tags needs no decoding, whatever Fetch would say.
	produce := kmsg.NewPtrProduceResponse()
	produce.SetVersion(9)
	body := produce.AppendTo(nil)
	for _, h := range hs {
		if h.Key == wire.ProduceKey && h.InspectRaw(9, body) != a.InspectResponse(wire.ProduceKey, 9, body) {
			t.Error("Produce handler's inspection differs from InspectResponse")
		}
	}
}
