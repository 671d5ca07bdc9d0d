package envelope

import (
	"bytes"
	"errors"
	"testing"
)

// TestAEADConstructorsInteroperate: a Sealer built from a ready AEAD writes
// what an Opener built from the plaintext opens, and the reverse; an AEAD
// of other sizes is refused.
func TestAEADConstructorsInteroperate(t *testing.T) {
	dek := testDEK("wrapped-1")
	aead, err := newGCM(dek.Plaintext)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSealerAEAD(aead, dek.Wrapped, dek.KEKID)
	if err != nil {
		t.Fatal(err)
	}
	marker, _ := s.Marker(Value)
	if want, _ := mustSealer(t, dek).Marker(Value); !bytes.Equal(marker, want) {
		t.Fatalf("marker %x, want %x", marker, want)
	}
	m, err := ParseMarker(marker)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := s.SealValue(nil, Value, "t", []byte("plain"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := mustOpener(t, dek.Plaintext).OpenValue(nil, m, "t", sealed); err != nil || string(got) != "plain" {
		t.Fatalf("opened %q, %v", got, err)
	}
	o, err := NewOpenerAEAD(aead)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := o.OpenValue(nil, m, "t", sealed); err != nil || string(got) != "plain" {
		t.Fatalf("opened %q, %v", got, err)
	}
	if _, err := NewOpenerAEAD(nil); !errors.Is(err, ErrInvalidDEK) {
		t.Errorf("nil AEAD: %v", err)
	}
	if _, err := NewSealerAEAD(aead, nil, dek.KEKID); !errors.Is(err, ErrInvalidDEK) {
		t.Errorf("no wrapped form: %v", err)
	}
}
