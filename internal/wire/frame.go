package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// DefaultMaxFrameSize is the largest frame kproxy accepts unless configured
// otherwise. Kafka's own socket.request.max.bytes defaults to 100 MiB.
const DefaultMaxFrameSize = 100 << 20

// FrameSizeLen is the length of the big-endian int32 that starts every frame.
const FrameSizeLen = 4

// ErrFrameTooLarge is returned for a frame whose declared size exceeds the
// configured maximum. The caller must close the connection without reading or
// allocating the body.
var ErrFrameTooLarge = errors.New("frame larger than the configured maximum")

// ErrFrameTooSmall is returned for a frame whose declared size cannot hold
// even a header.
var ErrFrameTooSmall = errors.New("frame smaller than a header")

// minFrameSize is the smallest body any frame can have: a response header is
// a 4-byte correlation id.
const minFrameSize = 4

// ParseFrameSize validates the 4-byte size prefix of a frame against max and
// returns the body length that follows it.
func ParseFrameSize(prefix []byte, max int32) (int32, error) {
	if len(prefix) < FrameSizeLen {
		return 0, fmt.Errorf("frame size prefix: %w", ErrShortBuffer)
	}
	size := int32(binary.BigEndian.Uint32(prefix))
	switch {
	case size < minFrameSize:
		return 0, fmt.Errorf("frame size %d: %w", size, ErrFrameTooSmall)
	case size > max:
		return 0, fmt.Errorf("frame size %d > %d: %w", size, max, ErrFrameTooLarge)
	}
	return size, nil
}

// AppendFrameSize appends the size prefix for a body of n bytes.
func AppendFrameSize(dst []byte, n int) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}
