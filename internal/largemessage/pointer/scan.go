package pointer

import "bytes"

// MayBeIn reports whether raw record bytes (a batch's uncompressed
// records area) may hold a pointer value: whether the marker Detect looks
// for is anywhere in them. False rules every record out without decoding
// one.
func MayBeIn(records []byte) bool { return bytes.Contains(records, marker) }
