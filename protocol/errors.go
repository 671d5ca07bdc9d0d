package protocol

import "github.com/kproxy/kproxy/internal/wire"

// Errors the parsers wrap, for errors.Is. A peer that sends bytes failing
// with any of them is not speaking Kafka: close its connection.
var (
	// ErrShortBuffer: the bytes end before the field being read.
	ErrShortBuffer = wire.ErrShortBuffer
	// ErrMalformed: a field holds a value no encoder writes.
	ErrMalformed = wire.ErrMalformed
	// ErrUnknownAPIKey: the table has no row for the key.
	ErrUnknownAPIKey = wire.ErrUnknownAPIKey
	// ErrUnsupportedVersion: a version the key's row cannot decode.
	ErrUnsupportedVersion = wire.ErrUnsupportedVersion
)
