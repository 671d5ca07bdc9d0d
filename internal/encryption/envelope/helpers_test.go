package envelope

import (
	"bytes"
	"errors"
	"testing"
)

// testDEK is a DEK with a fixed plaintext (0x00..0x1f) and the given
// wrapped form; the KMS is not involved at this layer.
func testDEK(wrapped string) DEK {
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = byte(i)
	}
	return DEK{Plaintext: key, Wrapped: []byte(wrapped), KEKID: "arn:aws:kms:eu-west-1:111122223333:key/kek-1"}
}

// mustSealer builds a Sealer or fails the test.
func mustSealer(t testing.TB, dek DEK) *Sealer {
	t.Helper()
	s, err := NewSealer(dek)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustOpener builds an Opener or fails the test.
func mustOpener(t testing.TB, plaintext []byte) *Opener {
	t.Helper()
	o, err := NewOpener(plaintext)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// sealedRecord is one record's sealed parts: what a rewriter writes.
type sealedRecord struct {
	marker      []byte
	value       []byte
	headerName  []byte
	headerValue []byte
}

// sealRecord seals a value and one header value under s for topic.
func sealRecord(t testing.TB, s *Sealer, topic string, value []byte, headerName string, headerValue []byte) sealedRecord {
	t.Helper()
	parts := Value | HeaderValues
	marker, err := s.Marker(parts)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.SealValue(nil, parts, topic, value)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.SealHeader(nil, parts, topic, []byte(headerName), headerValue)
	if err != nil {
		t.Fatal(err)
	}
	return sealedRecord{marker: bytes.Clone(marker), value: v, headerName: []byte(headerName), headerValue: h}
}

// openRecord opens both parts of r as a fetch path would: parse the
// marker, then open the value and the header value.
func openRecord(o *Opener, topic string, r sealedRecord) (value, headerValue []byte, err error) {
	m, err := ParseMarker(r.marker)
	if err != nil {
		return nil, nil, err
	}
	if value, err = o.OpenValue(nil, m, topic, r.value); err != nil {
		return nil, nil, err
	}
	if headerValue, err = o.OpenHeader(nil, m, topic, r.headerName, r.headerValue); err != nil {
		return nil, nil, err
	}
	return value, headerValue, nil
}

// knownError reports whether err wraps one of the package's sentinels:
// every failure must be classifiable by the caller.
func knownError(err error) bool {
	for _, e := range []error{ErrMalformed, ErrUnsupportedVersion, ErrAuthentication, ErrDEKExhausted, ErrInvalidDEK} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
