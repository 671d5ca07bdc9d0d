package testkit

import (
	"testing"

	"github.com/kproxy/kproxy/internal/freeport"
)

// The ports FreePortRun hands out lie below the kernel's ephemeral range,
// where no listener on port 0 and no outgoing connection of a test running
// alongside can be handed them before the configuration that names them
// is bound.
func TestFreePortRunBelowEphemeralRange(t *testing.T) {
	low := freeport.EphemeralLow()
	for range 20 {
		base := FreePortRun(t, "127.0.0.1", 5)
		if base < freeport.BelowEphemeral || base+4 >= low {
			t.Fatalf("FreePortRun(5) = %d..%d; want within %d..%d, below the ephemeral range", base, base+4, freeport.BelowEphemeral, low-1)
		}
		if !freeport.Free("127.0.0.1", base, 5) {
			t.Fatalf("FreePortRun(5) = %d: not all five free", base)
		}
	}
}
