package testkit

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDenseRequestBodyDecodes: every dense body kmsg decodes, and
// re-encodes to the same bytes, so the hostile frames built from it are
// valid requests, not malformed ones refused for another reason.
func TestDenseRequestBodyDecodes(t *testing.T) {
	n := 0
	for key := int16(0); key < 100; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		for v := req.GetVersion(); v <= req.MaxVersion(); v++ {
			body, ok := DenseRequestBody(key, v, 4096)
			if !ok {
				continue
			}
			r := kmsg.RequestForKey(key)
			r.SetVersion(v)
			if err := r.ReadFrom(body); err != nil {
				t.Errorf("key %d v%d: %v", key, v, err)
			} else if again := r.AppendTo(nil); string(again) != string(body) {
				t.Errorf("key %d v%d: body does not re-encode to itself (%d vs %d bytes)", key, v, len(again), len(body))
			}
			n++
		}
	}
	t.Logf("%d bodies decode", n)
}
