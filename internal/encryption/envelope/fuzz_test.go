package envelope

import (
	"bytes"
	"testing"
)

// FuzzOpen: arbitrary marker bytes, sealed bytes, topic and header name
// never panic and fail only with a package error; and since any change to
// a sealed record or its context must fail authentication, an input opens
// only when it is exactly a record the seed sealed.
func FuzzOpen(f *testing.F) {
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(f, dek)
	// Fixed nonces: every fuzz worker process must seal the same seeds.
	var n byte
	s.nonce = func(b []byte) { n++; clear(b); b[0] = n }
	o := mustOpener(f, dek.Plaintext)
	valueOnly := bytes.Clone(s.markers[Value])
	sealedValue, err := s.SealValue(nil, Value, "payments.cards", []byte("card 4111"))
	if err != nil {
		f.Fatal(err)
	}
	both := sealRecord(f, s, "payments.cards", []byte("v"), "trace-id", []byte("abc"))
	f.Add(valueOnly, sealedValue, "payments.cards", []byte(nil))
	f.Add(both.marker, both.value, "payments.cards", []byte(nil))
	f.Add(both.marker, both.headerValue, "payments.cards", both.headerName)
	f.Add([]byte{Version, 3, 0, 0, 0, 1, 'w'}, make([]byte, Overhead), "t", []byte("h"))
	f.Add([]byte{Version, 1, 0xff, 0xff}, []byte{}, "", []byte(nil))
	valid := []struct {
		marker, sealed []byte
		topic          string
		name           []byte
	}{
		{valueOnly, sealedValue, "payments.cards", nil},
		{both.marker, both.value, "payments.cards", nil},
		{both.marker, both.headerValue, "payments.cards", both.headerName},
	}
	f.Fuzz(func(t *testing.T, marker, sealed []byte, topic string, name []byte) {
		m, err := ParseMarker(marker)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("ParseMarker: %v wraps no package error", err)
			}
			return
		}
		var opened []byte
		if len(name) == 0 {
			opened, err = o.OpenValue(nil, m, topic, sealed)
		} else {
			opened, err = o.OpenHeader(nil, m, topic, name, sealed)
		}
		if err != nil {
			if !knownError(err) {
				t.Fatalf("open: %v wraps no package error", err)
			}
			return
		}
		for _, v := range valid {
			if bytes.Equal(marker, v.marker) && bytes.Equal(sealed, v.sealed) && topic == v.topic && bytes.Equal(name, v.name) {
				return
			}
		}
		t.Fatalf("opened %q from a record no one sealed: marker %x sealed %x topic %q name %q", opened, marker, sealed, topic, name)
	})
}
