package protocol

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
)

// DecodeRequest decodes the body of a request (the bytes after its header,
// from RequestHeader.Len) into the kmsg request of apiKey at apiVersion.
// The request's strings and byte slices (record batches above all) alias
// body, so body must not change while the request is in use. A body whose
// decoding would take far more memory than its size (a hostile array
// count) is refused, with an error wrapping ErrMalformed, before kmsg
// allocates anything for it.
func DecodeRequest(apiKey, apiVersion int16, body []byte) (kmsg.Request, error) {
	return wire.DecodeRequest(apiKey, apiVersion, body)
}

// DecodeResponse is DecodeRequest for the body of a response (see
// SkipResponseHeader). An ApiVersions UNSUPPORTED_VERSION answer, which
// brokers encode as v0 whatever was asked (KIP-511), is decoded as v0 and
// keeps that version.
func DecodeResponse(apiKey, apiVersion int16, body []byte) (kmsg.Response, error) {
	return wire.DecodeResponse(apiKey, apiVersion, body)
}

// AppendRequestFrame appends a whole request frame (size prefix, header
// and body) for req to dst. The header's key, version and flexibility are
// req's; its correlation and client ids are h's.
func AppendRequestFrame(dst []byte, h RequestHeader, req kmsg.Request) []byte {
	return wire.AppendRequestFrame(dst, h, req)
}

// AppendResponseFrame appends a whole response frame (size prefix, header
// and body) for resp at its own version to dst.
func AppendResponseFrame(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	return wire.AppendResponseFrame(dst, correlationID, resp)
}
