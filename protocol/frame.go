package protocol

import "github.com/kproxy/kproxy/internal/wire"

// FrameSizeLen is the length of the big-endian int32 that starts every frame.
const FrameSizeLen = wire.FrameSizeLen

// ErrFrameTooLarge is ParseFrameSize's error for a frame whose declared
// size exceeds the maximum: close the connection without reading or
// allocating the body.
var ErrFrameTooLarge = wire.ErrFrameTooLarge

// ErrFrameTooSmall is ParseFrameSize's error for a frame whose declared
// size cannot hold even a header.
var ErrFrameTooSmall = wire.ErrFrameTooSmall

// ParseFrameSize validates the 4-byte size prefix of a frame against max
// and returns the length of the frame that follows it. It fails with
// ErrShortBuffer for fewer than 4 bytes, ErrFrameTooSmall or
// ErrFrameTooLarge.
func ParseFrameSize(prefix []byte, max int32) (int32, error) { return wire.ParseFrameSize(prefix, max) }

// AppendFrameSize appends the size prefix of a frame of n bytes to dst.
func AppendFrameSize(dst []byte, n int) []byte { return wire.AppendFrameSize(dst, n) }
