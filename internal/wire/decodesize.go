package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// kmsg allocates an array's elements as soon as it has read the array's
// count. It already refuses a count larger than the bytes left allow at the
// element's minimum wire size, but an element takes two or three wire
// bytes and 40 to 100 bytes of memory, so a frame of minimal elements
// (empty names, no partitions: valid encoding, nonsense content) decodes to
// 20 to 50 times its size. DecodedSize bounds that before kmsg runs.

// MaxDecodeRatio is the most memory a decoded message may use per byte of
// its body, beyond DecodeAllowance. Real requests and responses carry
// names, records and ids and decode to well under twice their size; only
// arrays of near-empty elements come near the ratio.
const MaxDecodeRatio = 8

// DecodeAllowance is memory any message may use decoded whatever its size,
// so that small messages with short names are never refused.
const DecodeAllowance = 256 << 10

// tagEntryCost bounds the memory of one tagged field kmsg keeps aside (an
// unknown tag): its map entry and share of the map's growth.
const tagEntryCost = 128

// ErrDecodeTooLarge is returned for a message whose decoding would use more
// than MaxDecodeRatio times its size (plus DecodeAllowance). It wraps
// ErrMalformed: the caller closes the connection.
var ErrDecodeTooLarge = fmt.Errorf("%w: decoded it would use too much memory", ErrMalformed)

// MaxDecodedSize is the most memory DecodeRequest and DecodeResponse let a
// body of bodyLen bytes use.
func MaxDecodedSize(bodyLen int) int { return MaxDecodeRatio*bodyLen + DecodeAllowance }

// DecodedSize walks body, the bytes after the header of a request (or, if
// response, a response) of key at version, without allocating, and returns
// an upper bound of the memory kmsg allocates to decode it (the body
// itself, which decoded strings and bytes alias or copy, included). It
// fails with ErrDecodeTooLarge as soon as the bound passes
// MaxDecodedSize(len(body)), and with ErrMalformed for a body whose counts
// or lengths run past its end, as kmsg would.
func DecodedSize(key, version int16, body []byte, response bool) (int, error) {
	return APIs().DecodedSize(key, version, body, response)
}

// DecodedSize is the package's DecodedSize for the messages of t's rows.
func (t *APITable) DecodedSize(key, version int16, body []byte, response bool) (int, error) {
	s := t.shape(key, version, response)
	if s == nil {
		return 0, fmt.Errorf("decoded size of %s v%d: %w", APIName(key), version, ErrUnsupportedVersion)
	}
	w := sizeWalker{b: body, flexible: s.flexible, cost: len(body), limit: MaxDecodedSize(len(body))}
	if err := w.shape(s); err != nil {
		kind := "request"
		if response {
			kind = "response"
		}
		return w.cost, fmt.Errorf("%s v%d %s of %d bytes: %w", APIName(key), version, kind, len(body), err)
	}
	return w.cost, nil
}

// sizeWalker moves over an encoded message by its shape, adding up what
// decoding it allocates.
type sizeWalker struct {
	b        []byte
	flexible bool
	cost     int
	limit    int
}

var errShort = fmt.Errorf("%w: length or count past the end", ErrMalformed)

func (w *sizeWalker) charge(n int) error {
	w.cost += n
	if w.cost > w.limit || n < 0 {
		return fmt.Errorf("%w (more than %d bytes)", ErrDecodeTooLarge, w.limit)
	}
	return nil
}

func (w *sizeWalker) shape(s *wireShape) error {
	for _, f := range s.fields {
		if err := w.field(f); err != nil {
			return err
		}
	}
	if s.flexible {
		return w.tags(s.tagRatio)
	}
	return nil
}

func (w *sizeWalker) field(f wireField) error {
	switch f.kind {
	case wireFixed:
		return w.skip(f.fixed)
	case wireString, wireNullableString, wireBytes:
		n, err := w.length(f.kind == wireBytes)
		if err != nil || n < 0 {
			return err
		}
		if f.kind == wireNullableString {
			if err := w.charge(f.goSize); err != nil {
				return err
			}
		}
		return w.skip(n)
	case wireArray:
		n, err := w.arrayLength()
		if err != nil || n <= 0 {
			return err
		}
		if n > len(w.b)/max(1, f.elem.minWire(w.flexible)) {
			return fmt.Errorf("array of %d: %w", n, errShort)
		}
		if err := w.charge(n * (f.goSize + f.elem.extraPerElement())); err != nil {
			return err
		}
		for range n {
			if err := w.field(*f.elem); err != nil {
				return err
			}
		}
		return nil
	case wireNullableStruct:
		if len(w.b) < 1 {
			return errShort
		}
		present := int8(w.b[0]) != -1
		w.b = w.b[1:]
		if !present {
			return nil
		}
		if err := w.charge(f.goSize); err != nil {
			return err
		}
		return w.shape(f.shape)
	case wireStruct:
		return w.shape(f.shape)
	}
	return fmt.Errorf("field kind %d: %w", f.kind, ErrMalformed)
}

func (w *sizeWalker) skip(n int) error {
	if n < 0 || n > len(w.b) {
		return errShort
	}
	w.b = w.b[n:]
	return nil
}

// length reads a string (int16), bytes or array (int32) length, or their
// compact form; negative is null.
func (w *sizeWalker) length(wide bool) (int, error) {
	if w.flexible {
		v, err := w.uvarint()
		return int(v) - 1, err
	}
	if wide {
		if len(w.b) < 4 {
			return 0, errShort
		}
		n := int32(binary.BigEndian.Uint32(w.b))
		w.b = w.b[4:]
		return int(n), nil
	}
	if len(w.b) < 2 {
		return 0, errShort
	}
	n := int16(binary.BigEndian.Uint16(w.b))
	w.b = w.b[2:]
	return int(n), nil
}

// arrayLength reads an array's length as kmsg does: a compact length is
// the varint read as an int32 minus one, so a varint of 2^31 or more is a
// negative (null) length to kmsg, not a count past the end, while a
// string's or bytes' compact length stays unsigned (length).
func (w *sizeWalker) arrayLength() (int, error) {
	if !w.flexible {
		return w.length(true)
	}
	v, err := w.uvarint()
	return int(int32(v) - 1), err
}

// uvarint reads an unsigned varint as kmsg does: at most 32 bits.
func (w *sizeWalker) uvarint() (uint32, error) {
	v, n := binary.Uvarint(w.b)
	if n <= 0 || v > math.MaxUint32 {
		return 0, fmt.Errorf("%w: bad varint", ErrMalformed)
	}
	w.b = w.b[n:]
	return uint32(v), nil
}

// tags passes a tag section: each tag costs its map entry, or, for a known
// tag, what decoding its bytes can allocate (ratio per byte).
func (w *sizeWalker) tags(ratio int) error {
	count, err := w.uvarint()
	if err != nil {
		return err
	}
	if int64(count)*2 > int64(len(w.b)) {
		return fmt.Errorf("%d tags: %w", count, errShort)
	}
	for range count {
		if _, err := w.uvarint(); err != nil {
			return err
		}
		size, err := w.uvarint()
		if err != nil {
			return err
		}
		if int64(size) > int64(len(w.b)) {
			return errShort
		}
		if err := w.charge(tagEntryCost + int(size)*ratio); err != nil {
			return err
		}
		w.b = w.b[size:]
	}
	return nil
}
