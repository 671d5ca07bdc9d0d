package wire

import (
	"encoding/binary"
	"fmt"
)

// ShareSession reads group_id, member_id and share_session_epoch, the
// first fields of a ShareFetch or ShareAcknowledge request body (KIP-932;
// every version is flexible, the strings compact and nullable), without
// decoding the rest. The strings alias body; a null one reads as nil.
func ShareSession(body []byte) (group, member []byte, epoch int32, err error) {
	off := 0
	field := func(name string) ([]byte, error) {
		n, size, err := uvarint(body[off:])
		if err != nil {
			return nil, fmt.Errorf("share session %s: %w", name, err)
		}
		off += size
		if n == 0 {
			return nil, nil // null
		}
		if n-1 > uint64(len(body)-off) {
			return nil, fmt.Errorf("share session %s of %d bytes: %w", name, n-1, ErrShortBuffer)
		}
		s := body[off : off+int(n-1)]
		off += int(n - 1)
		return s, nil
	}
	if group, err = field("group id"); err != nil {
		return nil, nil, 0, err
	}
	if member, err = field("member id"); err != nil {
		return nil, nil, 0, err
	}
	if len(body)-off < 4 {
		return nil, nil, 0, fmt.Errorf("share session epoch: %w", ErrShortBuffer)
	}
	return group, member, int32(binary.BigEndian.Uint32(body[off:])), nil
}

// ShareResponseErrorOffset is where the top-level error_code sits in a
// ShareFetch or ShareAcknowledge response frame (size prefix included)
// whose header carries no tagged field, as every broker sends it: after
// the correlation id, the empty tag section and throttle_time_ms.
const ShareResponseErrorOffset = FrameSizeLen + 4 + 1 + 4
