// Package protocol offers Kafka wire-format helpers on raw bytes: the
// framing, request and response headers, request and response bodies to
// and from kmsg messages, the table of API keys, and the group error of a
// group coordinator's response read in place. kproxy's engine uses these
// same functions on every frame it relays.
//
// Every function works on byte slices, never blocks and keeps no state;
// none panics, whatever the bytes. A frame is a big-endian int32 size
// (FrameSizeLen bytes) followed by that many bytes: a header, then a body.
// Functions named for "the bytes after the size prefix" take the frame
// without its size; those named for a body take what follows the header.
//
// Reading the error of a response as it arrives, without decoding it:
//
//	size, err := protocol.ParseFrameSize(prefix, 100<<20) // prefix: the frame's first 4 bytes
//	// ... read size more bytes into frame ...
//	if code, ok := protocol.GroupResponseErrorCode(int16(kmsg.Heartbeat), 4, frame); ok && code == kerr.NotCoordinator.Code {
//		// the client will look its coordinator up again
//	}
//
// The engine's other wire-format knowledge (decode-size bounds, streamed
// walks, produce summaries, session fields) is internal to kproxy.
package protocol
