package wire

import (
	"encoding/binary"
	"fmt"
)

// ProduceAcks reads the acks field of a Produce request body without decoding
// the records. acks=0 requests get no response, which the proxy must know
// before it waits for one.
func ProduceAcks(version int16, body []byte) (int16, error) {
	off := 0
	if version >= 3 { // transactional_id precedes acks
		if IsFlexible(ProduceKey, version) {
			n, size, err := uvarint(body)
			if err != nil {
				return 0, fmt.Errorf("produce transactional id: %w", err)
			}
			off = size
			if n > 0 { // compact nullable string: length+1, 0 = null
				off += int(n - 1)
			}
		} else {
			if len(body) < 2 {
				return 0, fmt.Errorf("produce transactional id: %w", ErrShortBuffer)
			}
			// Any negative length reads as null, as Kafka's and kmsg's
			// decoders read it.
			l := int(int16(binary.BigEndian.Uint16(body)))
			off = 2 + max(l, 0)
		}
	}
	if off < 0 || off+2 > len(body) {
		return 0, fmt.Errorf("produce acks: %w", ErrShortBuffer)
	}
	return int16(binary.BigEndian.Uint16(body[off:])), nil
}
