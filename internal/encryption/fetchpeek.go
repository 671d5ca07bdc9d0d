package encryption

import (
	"encoding/binary"
	"fmt"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/encryption/envelope"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/rewrite/records"
)

// fetchNeed: flexible Fetch responses (v12 and later, which the raw walk
// reads) are looked at raw first (fetchWantsDecoding); older ones are
// decoded.
func fetchNeed(version int16) filter.Need {
	if wire.IsFlexible(wire.FetchKey, version) {
		return filter.Inspect
	}
	return filter.Decode
}

// fetchWantsDecoding reports whether a Fetch response body might hold an
// encrypted record (records.MayHoldMark of the marker header's name in a
// partition's records). When none might, the engine relays the response
// as it came, neither decoded nor re-encoded: a fetch of unencrypted
// records costs a copy.
func fetchWantsDecoding(version int16, body []byte) bool {
	s := recordsStepper{b: body, mark: []byte(envelope.HeaderName)}
	if err := wire.WalkFetchResponseToTags(version, &s); err != nil {
		return true // decoding reports it
	}
	return s.marked
}

// recordsStepper walks a Fetch response body in memory, looking at each
// partition's records (the walk's large values) for the marker.
type recordsStepper struct {
	b      []byte
	mark   []byte // the marker header's name
	marked bool
}

func (s *recordsStepper) Remaining() int { return len(s.b) }

func (s *recordsStepper) Skip(n int) error {
	if n < 0 || n > len(s.b) {
		return fmt.Errorf("skip %d of %d bytes: %w", n, len(s.b), wire.ErrShortBuffer)
	}
	s.b = s.b[n:]
	return nil
}

func (s *recordsStepper) SkipLarge(n int) error {
	if n >= 0 && n <= len(s.b) && !s.marked {
		s.marked = records.MayHoldMark(s.b[:n], s.mark)
	}
	return s.Skip(n)
}

func (s *recordsStepper) Uvarint() (uint64, error) {
	v, n := binary.Uvarint(s.b)
	if n <= 0 {
		return 0, fmt.Errorf("bad uvarint: %w", wire.ErrShortBuffer)
	}
	s.b = s.b[n:]
	return v, nil
}

func (s *recordsStepper) ErrorCode() error { return s.Skip(2) }
