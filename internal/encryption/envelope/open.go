package envelope

import (
	"crypto/cipher"
	"fmt"
)

// Opener opens record parts sealed under one DEK. Build one per unwrapped
// DEK (look it up by Marker.Wrapped) and share it; it is safe for
// concurrent use.
type Opener struct {
	aead cipher.AEAD
	aad  aadBuffers
}

// NewOpener prepares an unwrapped DEK's plaintext for opening.
func NewOpener(plaintext []byte) (*Opener, error) {
	aead, err := newGCM(plaintext)
	if err != nil {
		return nil, err
	}
	return &Opener{aead: aead}, nil
}

// OpenValue appends the plaintext of a sealed record value of topic to
// dst. m is the record's parsed marker. dst must not overlap sealed.
func (o *Opener) OpenValue(dst []byte, m Marker, topic string, sealed []byte) ([]byte, error) {
	return o.open(dst, m, Value, topic, nil, sealed)
}

// OpenHeader appends the plaintext of the sealed value of header name in
// a record of topic to dst. dst must not overlap sealed.
func (o *Opener) OpenHeader(dst []byte, m Marker, topic string, name, sealed []byte) ([]byte, error) {
	return o.open(dst, m, HeaderValues, topic, name, sealed)
}

func (o *Opener) open(dst []byte, m Marker, part Parts, topic string, name, sealed []byte) ([]byte, error) {
	if m.raw == nil {
		return dst, fmt.Errorf("%w: marker not parsed", ErrMalformed)
	}
	if m.Parts&part == 0 {
		return dst, fmt.Errorf("%w: opening part 0x%02x of a record whose marker lists 0x%02x", ErrMalformed, byte(part), byte(m.Parts))
	}
	if part == HeaderValues && IsMarker(name) {
		return dst, fmt.Errorf("%w: the %s header is never sealed", ErrMalformed, HeaderName)
	}
	if len(sealed) < Overhead {
		return dst, fmt.Errorf("%w: sealed part is %d bytes, at least %d", ErrMalformed, len(sealed), Overhead)
	}
	aad := o.aad.get()
	*aad = appendAAD(*aad, part, topic, name, m.raw)
	out, err := o.aead.Open(dst, sealed[:NonceSize], sealed[NonceSize:], *aad)
	o.aad.put(aad)
	if err != nil {
		return dst, ErrAuthentication
	}
	return out, nil
}
