package envelope

import (
	"bytes"
	"testing"
)

// TestSteadyStateAllocatesNothing: with reused buffers, sealing and
// opening a record (marker, value, header value) allocates nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(t, dek)
	o := mustOpener(t, dek.Plaintext)
	parts := Value | HeaderValues
	value := bytes.Repeat([]byte("v"), 1024)
	name, headerValue := []byte("trace-id"), []byte("abc")
	var sealedValue, sealedHeader, openedValue, openedHeader []byte
	var err error
	record := func() {
		marker, _ := s.Marker(parts)
		sealedValue, _ = s.SealValue(sealedValue[:0], parts, "payments.cards", value)
		sealedHeader, _ = s.SealHeader(sealedHeader[:0], parts, "payments.cards", name, headerValue)
		m, _ := ParseMarker(marker)
		openedValue, err = o.OpenValue(openedValue[:0], m, "payments.cards", sealedValue)
		openedHeader, _ = o.OpenHeader(openedHeader[:0], m, "payments.cards", name, sealedHeader)
	}
	record()
	if allocs := testing.AllocsPerRun(1000, record); allocs != 0 {
		t.Fatalf("%v allocations per record, want 0", allocs)
	}
	if err != nil || !bytes.Equal(openedValue, value) || string(openedHeader) != "abc" {
		t.Fatalf("round trip failed: %v", err)
	}
}
