package protocol

import (
	"encoding/binary"
	"fmt"
)

// Fetch sessions (KIP-227) from raw bytes: what a quota needs to answer a
// throttled fetch as a broker does, without decoding the request or the
// records of its response.

// FetchSessionless is the session id of a fetch outside any session.
const FetchSessionless int32 = 0

// FetchRequestSession reads session_id and session_epoch of a Fetch
// request body (v7+; before v7 there are no sessions: 0 and -1, a
// sessionless fetch). They follow fixed-width fields only.
func FetchRequestSession(version int16, body []byte) (id, epoch int32, err error) {
	if version < 7 {
		return FetchSessionless, -1, nil
	}
	off := 17 // replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level
	if version >= 15 {
		off -= 4 // replica_id moved to a tagged field (KIP-903)
	}
	if len(body) < off+8 {
		return 0, 0, fmt.Errorf("fetch session: %w", ErrShortBuffer)
	}
	return int32(binary.BigEndian.Uint32(body[off:])), int32(binary.BigEndian.Uint32(body[off+4:])), nil
}

// FetchIncremental reports whether a fetch of session id and epoch
// continues a session the broker holds (KIP-227: id set, epoch past 0):
// the broker advances the session's epoch for it, answered or throttled.
func FetchIncremental(id, epoch int32) bool { return id != FetchSessionless && epoch > 0 }

// FetchResponseSession reads error_code and session_id of a Fetch
// response body (v7+; before v7: none and 0), after throttle_time_ms.
func FetchResponseSession(version int16, body []byte) (errorCode int16, id int32, err error) {
	if version < 7 {
		return 0, FetchSessionless, nil
	}
	if len(body) < 10 {
		return 0, 0, fmt.Errorf("fetch response session: %w", ErrShortBuffer)
	}
	return int16(binary.BigEndian.Uint16(body[4:])), int32(binary.BigEndian.Uint32(body[6:])), nil
}
