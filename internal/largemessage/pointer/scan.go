package pointer

import "bytes"

// MarkerIn reports whether raw record bytes (a batch's uncompressed
// records area) hold the marker Detect looks for: false rules every
// record out without framing one.
func MarkerIn(records []byte) bool { return bytes.Contains(records, marker) }
