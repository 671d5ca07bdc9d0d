package filter

import (
	"crypto/rand"
	"io"
)

// PlaceholderLen is the length of a Splicer's placeholders.
const PlaceholderLen = 16

// Splicer lets a Verdict.OnFetchSpliced hook put into a Fetch response
// (an OnShareFetchSpliced one into a ShareFetch response) a record value
// it streams rather than holds, such as a large message kept in object
// storage: the handler encodes the record with the placeholder
// Add returns in the value's place (records.Spliced does this, with the
// record and batch lengths and the CRC of the real value), and the
// engine, once the response is encoded, writes the value's bytes where
// the placeholder is, as they arrive from open, fixing the lengths that
// enclose the records (the partition's records and the frame). Neither
// the value nor a response holding it is ever in memory whole.
//
// Placeholders are random, so no bytes a client or broker sent can be
// taken for one. The engine owns the Splicer; a handler must not keep it
// past the call.
type Splicer struct {
	splices []Splice
}

// Splice is one value a handler spliced, as the engine reads it.
type Splice struct {
	Placeholder [PlaceholderLen]byte
	// Size is the value's length in bytes.
	Size int64
	// Open starts the value's stream. The engine reads it to its end (an
	// error there, a verifying reader's digest mismatch included, closes
	// the client's connection: the frame's size was already sent) and
	// closes it.
	Open func() (io.ReadCloser, error)
}

// Add registers a value of size bytes that open streams, and returns the
// placeholder to encode in its place.
func (s *Splicer) Add(size int64, open func() (io.ReadCloser, error)) []byte {
	sp := Splice{Size: size, Open: open}
	_, _ = rand.Read(sp.Placeholder[:]) // crypto/rand.Read never fails
	s.splices = append(s.splices, sp)
	return sp.Placeholder[:]
}

// Splices is what the handlers added since Reset. For the engine.
func (s *Splicer) Splices() []Splice { return s.splices }

// Reset forgets the splices, for the next response. For the engine.
func (s *Splicer) Reset() {
	clear(s.splices)
	s.splices = s.splices[:0]
}
