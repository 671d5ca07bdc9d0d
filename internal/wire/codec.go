package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DecodeResponse decodes the body of a response (the bytes after its header)
// to version of key. A body whose decoding would use more than
// MaxDecodedSize of its length is refused (ErrDecodeTooLarge) before kmsg
// allocates anything for it.
//
// A broker answers an ApiVersions request it cannot serve with
// UNSUPPORTED_VERSION in the v0 body layout, whatever version was asked
// (KIP-511). Such a response is decoded as v0 and keeps that version, so
// encoding it again reproduces the upstream's fallback for the client.
func DecodeResponse(key, version int16, body []byte) (kmsg.Response, error) {
	return APIs().DecodeResponse(key, version, body)
}

// DecodeResponse is the package's DecodeResponse, with the response made
// by key's row in t.
func (t *APITable) DecodeResponse(key, version int16, body []byte) (kmsg.Response, error) {
	api, ok := t.API(key)
	if !ok {
		return nil, fmt.Errorf("decode response: %w %d", ErrUnknownAPIKey, key)
	}
	resp := api.NewResponse()
	version = ResponseBodyVersion(key, version, body)
	if _, err := t.DecodedSize(key, version, body, true); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	resp.SetVersion(version)
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s v%d response: %w", api.Name, version, err)
	}
	return resp, nil
}

// ResponseBodyVersion is the version body, a response to a request of
// version, is encoded in: version itself, except for an ApiVersions
// UNSUPPORTED_VERSION answer, which is v0 (see DecodeResponse).
func ResponseBodyVersion(key, version int16, body []byte) int16 {
	if key == APIVersionsKey && version > 0 && len(body) >= 2 &&
		int16(binary.BigEndian.Uint16(body)) == ErrCodeUnsupportedVersion {
		return 0
	}
	return version
}

// AppendResponseFrame appends a whole response frame (size prefix, header
// and body) for resp at its own version.
func AppendResponseFrame(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = AppendResponseHeader(dst, resp.Key(), resp.GetVersion(), correlationID)
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-FrameSizeLen))
	return dst
}

// DecodeRequest decodes the body of a request (the bytes after its header).
// The request's strings and byte slices (record batches above all) alias
// body rather than copy it, so body must not be changed or reused while the
// request is in use. As DecodeResponse, it refuses a body whose decoding
// would use more than MaxDecodedSize of its length.
func DecodeRequest(key, version int16, body []byte) (kmsg.Request, error) {
	return APIs().DecodeRequest(key, version, body)
}

// DecodeRequest is the package's DecodeRequest, with the request made by
// key's row in t.
func (t *APITable) DecodeRequest(key, version int16, body []byte) (kmsg.Request, error) {
	api, ok := t.API(key)
	if !ok {
		return nil, fmt.Errorf("decode request: %w %d", ErrUnknownAPIKey, key)
	}
	req := api.NewRequest()
	if _, err := t.DecodedSize(key, version, body, false); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	req.SetVersion(version)
	read := req.ReadFrom
	if u, ok := req.(kmsg.UnsafeReadFrom); ok {
		read = u.UnsafeReadFrom
	}
	if err := read(body); err != nil {
		return nil, fmt.Errorf("decode %s v%d request: %w", api.Name, version, err)
	}
	return req, nil
}

// AppendRequestFrame appends a whole request frame for req with header h.
// h.APIKey and h.APIVersion are taken from req.
func AppendRequestFrame(dst []byte, h RequestHeader, req kmsg.Request) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	h.APIKey, h.APIVersion = req.Key(), req.GetVersion()
	h.Flexible = IsFlexible(h.APIKey, h.APIVersion)
	dst = AppendRequestHeader(dst, h)
	dst = req.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-FrameSizeLen))
	return dst
}
