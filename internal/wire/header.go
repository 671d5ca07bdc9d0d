package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrShortBuffer is returned when a buffer ends before the field being read.
var ErrShortBuffer = errors.New("buffer too short")

// RequestHeader is the part of a request that precedes its body.
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	// ClientID is the client.id the request names; "" when null.
	ClientID string
	// Flexible is true for the v2 header (tagged fields after the client id).
	Flexible bool
	// Len is the number of bytes the header occupies; the body starts there.
	Len int
}

// RequestHeaderFixedLen is the size of api key, api version and correlation id.
const RequestHeaderFixedLen = 8

// ParseRequestHeader parses the header at the start of a request frame (the
// bytes after the size prefix). The API key must be known to kmsg, since only
// then is it known whether the header carries tagged fields.
func ParseRequestHeader(b []byte) (RequestHeader, error) { return APIs().ParseRequestHeader(b) }

// ParseRequestHeader is the package's ParseRequestHeader for the keys of t.
func (t *APITable) ParseRequestHeader(b []byte) (RequestHeader, error) {
	h, clientID, err := t.PeekRequestHeader(b)
	if err == nil && clientID != nil {
		h.ClientID = string(clientID)
	}
	return h, err
}

// PeekRequestHeader is ParseRequestHeader without the copy: it leaves
// h.ClientID empty and returns the client id as a slice of b (nil when
// null), so the proxy's data path parses headers without allocating.
func PeekRequestHeader(b []byte) (h RequestHeader, clientID []byte, err error) {
	return APIs().PeekRequestHeader(b)
}

// PeekRequestHeader is the package's PeekRequestHeader for the keys of t.
func (t *APITable) PeekRequestHeader(b []byte) (h RequestHeader, clientID []byte, err error) {
	if len(b) < RequestHeaderFixedLen+2 {
		return h, nil, fmt.Errorf("request header: %w", ErrShortBuffer)
	}
	h.APIKey = int16(binary.BigEndian.Uint16(b))
	h.APIVersion = int16(binary.BigEndian.Uint16(b[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(b[4:]))
	if !t.KnownAPI(h.APIKey) {
		return h, nil, fmt.Errorf("request header: %w %d", ErrUnknownAPIKey, h.APIKey)
	}
	if h.APIVersion < 0 {
		return h, nil, fmt.Errorf("request header: %s version %d: %w", t.apis[h.APIKey].Name, h.APIVersion, ErrUnsupportedVersion)
	}
	h.Flexible = t.IsFlexible(h.APIKey, h.APIVersion)

	off := RequestHeaderFixedLen
	idLen := int(int16(binary.BigEndian.Uint16(b[off:])))
	off += 2
	switch {
	case idLen == -1: // null client id
	case idLen < -1:
		return h, nil, fmt.Errorf("request header: client id length %d: %w", idLen, ErrMalformed)
	case off+idLen > len(b):
		return h, nil, fmt.Errorf("request header: client id: %w", ErrShortBuffer)
	default:
		clientID = b[off : off+idLen : off+idLen]
		off += idLen
	}
	if h.Flexible {
		n, err := skipTaggedFields(b[off:])
		if err != nil {
			return h, nil, fmt.Errorf("request header tagged fields: %w", err)
		}
		off += n
	}
	h.Len = off
	return h, clientID, nil
}

// AppendRequestHeader encodes h (all fields but Len) onto dst. Flexible
// headers are written with no tagged fields.
func AppendRequestHeader(dst []byte, h RequestHeader) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.APIKey))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.APIVersion))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.CorrelationID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(h.ClientID)))
	dst = append(dst, h.ClientID...)
	if h.Flexible {
		dst = append(dst, 0)
	}
	return dst
}

// ResponseHeaderFlexible reports whether the response to version of key
// carries the v1 response header (correlation id plus tagged fields).
// ApiVersions responses always use the v0 header, so that a client can read
// the answer to a version the broker does not support (KIP-511).
func ResponseHeaderFlexible(key, version int16) bool {
	return APIs().ResponseHeaderFlexible(key, version)
}

// ResponseHeaderFlexible is the package's ResponseHeaderFlexible for the
// keys of t.
func (t *APITable) ResponseHeaderFlexible(key, version int16) bool {
	return key != APIVersionsKey && t.IsFlexible(key, version)
}

// ResponseCorrelationID reads the correlation id at the start of a response
// frame (the bytes after the size prefix).
func ResponseCorrelationID(b []byte) (int32, error) {
	if len(b) < 4 {
		return 0, fmt.Errorf("response header: %w", ErrShortBuffer)
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// SkipResponseHeader returns the body of a response frame to version of key,
// that is b without its correlation id and, for flexible responses, its
// tagged fields.
func SkipResponseHeader(key, version int16, b []byte) ([]byte, error) {
	return APIs().SkipResponseHeader(key, version, b)
}

// SkipResponseHeader is the package's SkipResponseHeader for the keys of t.
func (t *APITable) SkipResponseHeader(key, version int16, b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("response header: %w", ErrShortBuffer)
	}
	off := 4
	if t.ResponseHeaderFlexible(key, version) {
		n, err := skipTaggedFields(b[off:])
		if err != nil {
			return nil, fmt.Errorf("response header tagged fields: %w", err)
		}
		off += n
	}
	return b[off:], nil
}

// AppendResponseHeader encodes the response header for version of key.
func AppendResponseHeader(dst []byte, key, version int16, correlationID int32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if ResponseHeaderFlexible(key, version) {
		dst = append(dst, 0)
	}
	return dst
}

// skipTaggedFields returns how many bytes the tagged-field section at the
// start of b occupies.
func skipTaggedFields(b []byte) (int, error) {
	count, off, err := uvarint(b)
	if err != nil {
		return 0, err
	}
	for i := uint64(0); i < count; i++ {
		_, n, err := uvarint(b[off:])
		if err != nil {
			return 0, fmt.Errorf("tag %d: %w", i, err)
		}
		off += n
		size, n, err := uvarint(b[off:])
		if err != nil {
			return 0, fmt.Errorf("tag %d size: %w", i, err)
		}
		off += n
		if size > uint64(len(b)-off) {
			return 0, fmt.Errorf("tag %d size %d: %w", i, size, ErrShortBuffer)
		}
		off += int(size)
	}
	return off, nil
}

// uvarint decodes an unsigned varint of at most 5 bytes (Kafka never writes
// longer ones in headers), returning the value and the bytes read.
func uvarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, fmt.Errorf("varint: %w", ErrShortBuffer)
		}
		c := b[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("varint longer than 5 bytes: %w", ErrMalformed)
}
