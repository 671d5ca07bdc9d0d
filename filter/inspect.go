package filter

// RequestInspector is implemented by request filters that can often decide
// a request from its raw bytes, so that the engine need not decode it: a
// policy that allows a produce needs its topic names, not kmsg structs of
// its partitions.
//
// For a request of one of its RequestKeys, while no earlier filter has had
// the request decoded, the engine calls InspectRequest first. When it
// returns decided, v is the filter's verdict and FilterRequest is not
// called; otherwise the engine decodes the request and calls FilterRequest
// as for any filter. A decided verdict may forward (the zero Verdict),
// Close or Respond; it must not set Modified or OnResponse, which need a
// decoded request (the engine falls back to FilterRequest if it does).
type RequestInspector interface {
	// InspectRequest sees body, the bytes after the request header of a
	// request of key at version that conn sent. It must not keep body or
	// conn past the call, nor change body.
	InspectRequest(conn *Conn, key, version int16, body []byte) (v Verdict, decided bool)
}
