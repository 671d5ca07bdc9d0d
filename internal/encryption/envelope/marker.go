package envelope

import (
	"encoding/binary"
	"fmt"
)

// HeaderName is the record header that marks an encrypted record. Its
// value is the marker: format version, which parts are sealed, the KEK id
// and the wrapped DEK. A record without it is plaintext.
const HeaderName = "kproxy.encryption"

// Version is the format version this package writes and reads.
const Version byte = 1

// Parts says which parts of a record are sealed.
type Parts byte

// The parts a record may have sealed. The values are the marker's flag
// bits and the part byte of the authenticated data.
const (
	Value        Parts = 1 << 0 // the record value (a null value stays null)
	HeaderValues Parts = 1 << 1 // every header value but the marker's (null stays null)

	allParts = Value | HeaderValues
)

// markerFixedLen: version, parts, and the two uint16 lengths.
const markerFixedLen = 1 + 1 + 2 + 2

// IsMarker reports whether a header name is the marker's. A produce
// record that already carries it is refused with ClientMarkerError.
func IsMarker(name []byte) bool { return string(name) == HeaderName }

// Marker is a parsed marker header value. Its slices alias the bytes it
// was parsed from.
type Marker struct {
	Parts   Parts
	KEKID   []byte // the KEK that wrapped the DEK
	Wrapped []byte // the wrapped DEK: the key to look the Opener up by
	raw     []byte // the whole header value, bound into every part's AAD
}

// ParseMarker parses a marker header value without copying. It accepts
// exactly what AppendMarker writes: any other byte string is an error.
func ParseMarker(b []byte) (Marker, error) {
	if len(b) < markerFixedLen {
		return Marker{}, fmt.Errorf("%w: marker is %d bytes, at least %d", ErrMalformed, len(b), markerFixedLen)
	}
	if b[0] != Version {
		return Marker{}, fmt.Errorf("%w: marker version %d, this build reads %d", ErrUnsupportedVersion, b[0], Version)
	}
	parts := Parts(b[1])
	if parts == 0 || parts&^allParts != 0 {
		return Marker{}, fmt.Errorf("%w: marker parts flags 0x%02x", ErrMalformed, b[1])
	}
	rest := b[2:]
	kekID, rest, ok := cutUint16Prefixed(rest)
	if !ok {
		return Marker{}, fmt.Errorf("%w: marker KEK id overruns the marker", ErrMalformed)
	}
	wrapped, rest, ok := cutUint16Prefixed(rest)
	if !ok || len(wrapped) == 0 {
		return Marker{}, fmt.Errorf("%w: marker wrapped DEK is empty or overruns the marker", ErrMalformed)
	}
	if len(rest) != 0 {
		return Marker{}, fmt.Errorf("%w: %d bytes after the marker's wrapped DEK", ErrMalformed, len(rest))
	}
	return Marker{Parts: parts, KEKID: kekID, Wrapped: wrapped, raw: b}, nil
}

// appendMarker appends the marker header value for records sealed under
// dek with the given parts.
func appendMarker(dst []byte, parts Parts, dek DEK) []byte {
	dst = append(dst, Version, byte(parts))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(dek.KEKID)))
	dst = append(dst, dek.KEKID...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(dek.Wrapped)))
	return append(dst, dek.Wrapped...)
}

// cutUint16Prefixed splits a big-endian uint16 length-prefixed field off b.
func cutUint16Prefixed(b []byte) (field, rest []byte, ok bool) {
	if len(b) < 2 {
		return nil, nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b)-2 < n {
		return nil, nil, false
	}
	return b[2 : 2+n], b[2+n:], true
}
