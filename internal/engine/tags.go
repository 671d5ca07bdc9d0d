package engine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// streamStepper walks a frame as it streams from d.r to d.w: every field
// the walk passes is relayed, large values by splice where possible; the
// error codes passed go to errs.
type streamStepper struct {
	d    *direction
	left int // bytes of the frame not yet relayed
	errs wire.ErrorNoter
}

func (s *streamStepper) Remaining() int { return s.left }

func (s *streamStepper) Skip(n int) error {
	if n < 0 || n > s.left {
		return fmt.Errorf("field of %d bytes with %d left: %w", n, s.left, protocol.ErrShortBuffer)
	}
	s.left -= n
	return copyFrame(s.d.w, s.d.r, n)
}

func (s *streamStepper) SkipLarge(n int) error {
	if n < 0 || n > s.left {
		return fmt.Errorf("value of %d bytes with %d left: %w", n, s.left, protocol.ErrShortBuffer)
	}
	s.left -= n
	return s.d.stream(n)
}

func (s *streamStepper) ErrorCode() error {
	if s.left < 2 {
		return fmt.Errorf("error code with %d bytes left: %w", s.left, protocol.ErrShortBuffer)
	}
	b, err := s.d.r.Peek(2)
	if err != nil {
		return fmt.Errorf("%w: %w", errReadSide, err)
	}
	if code := int16(binary.BigEndian.Uint16(b)); code != 0 && s.errs != nil {
		s.errs.NoteError(code)
	}
	return s.Skip(2)
}

func (s *streamStepper) Uvarint() (uint64, error) {
	// Peek no further than the frame: the next frame may not come.
	b, err := s.d.r.Peek(min(s.left, binary.MaxVarintLen64))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errReadSide, err)
	}
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, fmt.Errorf("varint: %w", protocol.ErrMalformed)
	}
	return v, s.Skip(n)
}

// streamDroppingTags relays a response whose API has a walk to its tags
// (canDropTags) without holding it, walking its structure on the way, and replaces a non-empty top-level
// tag section (where KIP-951 leader endpoints live) with filler of the same
// length, since the frame's size has already gone out.
func (p *pair) streamDroppingTags(owed pending, down *direction, frameLen int) error {
	st := &down.stepper
	*st = streamStepper{d: down, left: frameLen, errs: p.countingErrors(owed.key)}
	err := st.Skip(protocol.FrameSizeLen + 4) // size and correlation id
	if err == nil && wire.ResponseHeaderFlexible(owed.key, owed.version) {
		err = wire.WalkTags(st)
	}
	if err == nil {
		err = walkToTags(owed.key, owed.version, st)
	}
	if err != nil {
		return streamError(err)
	}

	tail, err := readTail(down.r, st.left)
	if err != nil {
		return upstreamReadError(err)
	}
	tagged, err := wire.TagSectionHasFields(tail)
	if err != nil {
		return fail(reasonProtocol, fmt.Errorf("upstream %s response tag section: %w", protocol.APIName(owed.key), err))
	}
	if !tagged { // the common case: one zero byte
		_, err = down.w.Write(tail)
	} else {
		var filler []byte
		filler, _ = wire.AppendFillerTags(nil, len(tail)) // a valid non-empty section is >= 3 bytes
		_, err = down.w.Write(filler)
		p.logger().Debug().Str("api", protocol.APIName(owed.key)).Int("bytes", len(tail)).
			Msg("dropped top-level tagged fields (KIP-951 leader endpoints) from a streamed response")
	}
	if err != nil {
		return fail(reasonClientClosed, fmt.Errorf("write client: %w", err))
	}
	return nil
}

// walkToTags moves s over a response body of key to its top-level tags,
// by the walk of key's row in the API table.
func walkToTags(key, version int16, s wire.Stepper) error {
	api, ok := protocol.APIs().API(key)
	if !ok || api.WalkToTags == nil {
		return fmt.Errorf("%s v%d response: no walk to its tags: %w", protocol.APIName(key), version, protocol.ErrUnsupportedVersion)
	}
	return api.WalkToTags(version, s)
}

// readTail reads the last n bytes of a frame: from r's buffer when they
// fit (the common case is one byte), else into a buffer of their own.
func readTail(r *bufio.Reader, n int) ([]byte, error) {
	if n <= r.Size() {
		b, err := r.Peek(n)
		if err != nil {
			return nil, err
		}
		r.Discard(n) // b stays valid until the next read from r
		return b, nil
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// streamError classifies an error from relaying a walked frame.
func streamError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errWriteSide):
		return fail(reasonClientClosed, err)
	case errors.Is(err, errReadSide):
		return upstreamReadError(err)
	}
	return fail(reasonProtocol, fmt.Errorf("upstream response: %w", err))
}
