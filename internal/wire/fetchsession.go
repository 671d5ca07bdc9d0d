package wire

import (
	"encoding/binary"
	"fmt"
)

// Fetch sessions (KIP-227) sit at fixed places near the start of a Fetch
// request and response body, so the engine can read and change them in
// its read buffer without decoding anything.

// FetchSessionsVersion is the first Fetch version with sessions.
const FetchSessionsVersion = int16(7)

// fetchResponseSessionOffset is session_id's place in a Fetch v7+
// response body: after throttle_time_ms and error_code.
const fetchResponseSessionOffset = 4 + 2

// FetchRequestSessionOffset is where session_id sits in a Fetch v7+
// request body; session_epoch follows it. Before v15 replica_id comes
// first (KIP-903 moved it to a tagged field); then max_wait_ms,
// min_bytes, max_bytes and isolation_level.
func FetchRequestSessionOffset(version int16) int {
	if version >= 15 {
		return 4 + 4 + 4 + 1
	}
	return 4 + 4 + 4 + 4 + 1
}

// FetchRequestSession reads session_id and session_epoch from the first
// bytes of a Fetch request body at version. ok is false below v7 (no
// sessions) and when body is too short to hold them.
func FetchRequestSession(version int16, body []byte) (id, epoch int32, ok bool) {
	if version < FetchSessionsVersion {
		return 0, 0, false
	}
	off := FetchRequestSessionOffset(version)
	if len(body) < off+8 {
		return 0, 0, false
	}
	return int32(binary.BigEndian.Uint32(body[off:])), int32(binary.BigEndian.Uint32(body[off+4:])), true
}

// FetchSessionless is the session id of a fetch outside any session.
const FetchSessionless int32 = 0

// FetchIncremental reports whether a fetch of session id and epoch
// continues a session the broker holds (KIP-227: id set, epoch past 0):
// the broker advances the session's epoch for it, answered or throttled.
func FetchIncremental(id, epoch int32) bool { return id != FetchSessionless && epoch > 0 }

// FetchResponseSession reads error_code and session_id of a Fetch
// response body (v7+; before v7: none and 0), after throttle_time_ms.
func FetchResponseSession(version int16, body []byte) (errorCode int16, id int32, err error) {
	if version < FetchSessionsVersion {
		return 0, FetchSessionless, nil
	}
	if len(body) < fetchResponseSessionOffset+4 {
		return 0, 0, fmt.Errorf("fetch response session: %w", ErrShortBuffer)
	}
	return int16(binary.BigEndian.Uint16(body[4:])), int32(binary.BigEndian.Uint32(body[fetchResponseSessionOffset:])), nil
}
