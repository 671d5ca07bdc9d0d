package envelope

import (
	"bytes"
	"errors"
	"testing"
)

// TestEveryFlippedByteFails flips each bit of every byte of a sealed
// record (marker: version, parts, KEK id, wrapped DEK; value and header:
// nonce, ciphertext, tag) and expects the record not to open.
func TestEveryFlippedByteFails(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	o := mustOpener(t, dek.Plaintext)
	good := sealRecord(t, mustSealer(t, dek), "payments.cards", []byte("card 4111"), "trace-id", []byte("abc"))
	for _, field := range []struct {
		name string
		get  func(*sealedRecord) []byte
	}{
		{"marker", func(r *sealedRecord) []byte { return r.marker }},
		{"value", func(r *sealedRecord) []byte { return r.value }},
		{"header value", func(r *sealedRecord) []byte { return r.headerValue }},
	} {
		for i := range len(field.get(&good)) {
			for bit := range 8 {
				r := sealedRecord{marker: bytes.Clone(good.marker), value: bytes.Clone(good.value),
					headerName: good.headerName, headerValue: bytes.Clone(good.headerValue)}
				field.get(&r)[i] ^= 1 << bit
				_, _, err := openRecord(o, "payments.cards", r)
				if err == nil || !knownError(err) {
					t.Fatalf("%s byte %d bit %d flipped: err = %v, want a package error", field.name, i, bit, err)
				}
			}
		}
	}
}

func TestTruncatedOrExtendedPartsFail(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	o := mustOpener(t, dek.Plaintext)
	good := sealRecord(t, mustSealer(t, dek), "t", []byte("value"), "h", []byte("v"))
	for n := range len(good.value) {
		r := good
		r.value = good.value[:n]
		if _, _, err := openRecord(o, "t", r); err == nil || !knownError(err) {
			t.Fatalf("value cut to %d bytes: %v", n, err)
		}
	}
	for n := range len(good.marker) {
		r := good
		r.marker = good.marker[:n]
		if _, _, err := openRecord(o, "t", r); err == nil || !knownError(err) {
			t.Fatalf("marker cut to %d bytes: %v", n, err)
		}
	}
	r := good
	r.marker = append(bytes.Clone(good.marker), 0)
	if _, _, err := openRecord(o, "t", r); !errors.Is(err, ErrMalformed) {
		t.Fatalf("marker with a trailing byte: %v, want ErrMalformed", err)
	}
}

func TestUnknownVersionIsNamed(t *testing.T) {
	marker := mustSealer(t, testDEK("w")).markers[Value]
	for _, v := range []byte{0, 2, 0xff} {
		b := append([]byte{v}, marker[1:]...)
		if _, err := ParseMarker(b); !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("version %d: %v, want ErrUnsupportedVersion", v, err)
		}
	}
}

// TestMovedCiphertextFails: a sealed part opens only in the context it was
// sealed for.
func TestMovedCiphertextFails(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	s := mustSealer(t, dek)
	o := mustOpener(t, dek.Plaintext)
	r := sealRecord(t, s, "payments.cards", []byte("card 4111"), "trace-id", []byte("abc"))
	m, err := ParseMarker(r.marker)
	if err != nil {
		t.Fatal(err)
	}
	otherDEKMarker, err := ParseMarker(mustSealer(t, testDEK("wrapped-dek-2")).markers[Value|HeaderValues])
	if err != nil {
		t.Fatal(err)
	}
	valueOnlyMarker, err := ParseMarker(s.markers[Value])
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() ([]byte, error){
		"value to another topic":  func() ([]byte, error) { return o.OpenValue(nil, m, "payments.cardz", r.value) },
		"value to a prefix topic": func() ([]byte, error) { return o.OpenValue(nil, m, "payments", r.value) },
		"value into a header":     func() ([]byte, error) { return o.OpenHeader(nil, m, "payments.cards", r.headerName, r.value) },
		"header into the value":   func() ([]byte, error) { return o.OpenValue(nil, m, "payments.cards", r.headerValue) },
		"header to another name": func() ([]byte, error) {
			return o.OpenHeader(nil, m, "payments.cards", []byte("trace-ie"), r.headerValue)
		},
		"header to another topic": func() ([]byte, error) { return o.OpenHeader(nil, m, "other", r.headerName, r.headerValue) },
		"value under another wrapped DEK of the same key": func() ([]byte, error) {
			return o.OpenValue(nil, otherDEKMarker, "payments.cards", r.value)
		},
		"value under a marker listing other parts": func() ([]byte, error) {
			return o.OpenValue(nil, valueOnlyMarker, "payments.cards", r.value)
		},
		"topic and header name shifted": func() ([]byte, error) {
			return o.OpenHeader(nil, m, "payments.cardstrace-", []byte("id"), r.headerValue)
		},
	} {
		if got, err := open(); !errors.Is(err, ErrAuthentication) {
			t.Errorf("%s: opened %q, err %v; want ErrAuthentication", name, got, err)
		}
	}
}

func TestWrongDEKFails(t *testing.T) {
	dek := testDEK("wrapped-dek-1")
	r := sealRecord(t, mustSealer(t, dek), "t", []byte("value"), "h", []byte("v"))
	wrong := bytes.Clone(dek.Plaintext)
	wrong[31] ^= 1
	if _, _, err := openRecord(mustOpener(t, wrong), "t", r); !errors.Is(err, ErrAuthentication) {
		t.Fatalf("opened with a wrong DEK: %v, want ErrAuthentication", err)
	}
}
