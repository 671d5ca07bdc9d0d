package protocol

import "github.com/kproxy/kproxy/internal/wire"

// RequestHeader is the part of a request frame that precedes its body:
// APIKey, APIVersion, CorrelationID, ClientID, Flexible (the v2 header,
// with tagged fields after the client id) and Len, the bytes it occupies.
type RequestHeader = wire.RequestHeader

// PeekRequestHeader parses the header at the start of a request frame (the
// bytes after the size prefix) without copying: the returned header's
// ClientID is left empty and the client id is returned as a slice of b
// (nil when null). The API key must be in the table (APIs), since only
// then is it known whether the header carries tagged fields; the body
// starts at h.Len.
func PeekRequestHeader(b []byte) (h RequestHeader, clientID []byte, err error) {
	return wire.PeekRequestHeader(b)
}

// ResponseCorrelationID reads the correlation id at the start of a
// response frame (the bytes after the size prefix).
func ResponseCorrelationID(b []byte) (int32, error) { return wire.ResponseCorrelationID(b) }

// SkipResponseHeader returns the body of a response to apiVersion of
// apiKey: b (the bytes after the size prefix) without its correlation id
// and, for flexible versions, the header's tagged fields. ApiVersions
// responses always have the non-flexible header (KIP-511). It returns
// false when b ends inside the header or its tagged fields are malformed.
// The body is a slice of b.
func SkipResponseHeader(apiKey, apiVersion int16, b []byte) ([]byte, bool) {
	body, err := wire.SkipResponseHeader(apiKey, apiVersion, b)
	return body, err == nil
}
