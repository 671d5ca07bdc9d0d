package engine

import (
	"encoding/binary"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// minSplicedRecords is the smallest records field written as a piece of
// its own rather than copied into the frame: below it a copy costs less
// than a write call.
const minSplicedRecords = 16 << 10

// maxSplicedProduce is the newest Produce version appendProduceBody
// writes; a later one (kmsg learning it) is encoded by kmsg whole.
const maxSplicedProduce = 13

// recordsPiece is a records field written after frame[:at] and before
// frame[at:]: the frame holds its length, not its bytes.
type recordsPiece struct {
	at      int
	records []byte
}

// requestTail is what a filtered request's frame is written with: the
// records spliced into it, and the handlers' Verdict.Release, called once
// the frame is written.
type requestTail struct {
	pieces   []recordsPiece
	releases []func()
}

// appendProduceFrame is protocol.AppendRequestFrame for a Produce request
// but for the records a filter put into it (those of at least
// minSplicedRecords bytes outside frameBody, the request as it arrived):
// those are not copied but returned as pieces, to be written in place
// (writeFrame). A filter's sealed records are a megabyte a request, which
// the encoding would copy once more. The frame's size counts them.
func appendProduceFrame(dst []byte, h protocol.RequestHeader, req *kmsg.ProduceRequest, frameBody []byte, pieces []recordsPiece) ([]byte, []recordsPiece) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	h.APIKey, h.APIVersion = req.Key(), req.GetVersion()
	h.Flexible = wire.IsFlexible(h.APIKey, h.APIVersion)
	dst = wire.AppendRequestHeader(dst, h)
	first := len(pieces)
	dst, pieces = appendProduceBody(dst, req, frameBody, pieces)
	size := len(dst) - start - protocol.FrameSizeLen
	for i := first; i < len(pieces); i++ {
		pieces[i].at -= start
		size += len(pieces[i].records)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(size))
	return dst, pieces
}

// appendProduceBody is kmsg's ProduceRequest.AppendTo with the records to
// splice left out (their lengths written) and listed in pieces, at
// offsets into dst.
func appendProduceBody(dst []byte, req *kmsg.ProduceRequest, frameBody []byte, pieces []recordsPiece) ([]byte, []recordsPiece) {
	version := req.Version
	flexible := version >= 9
	if version >= 3 {
		dst = appendNullableString(dst, req.TransactionID, flexible)
	}
	dst = kbin.AppendInt16(dst, req.Acks)
	dst = kbin.AppendInt32(dst, req.TimeoutMillis)
	dst = appendArrayLen(dst, len(req.Topics), flexible)
	for i := range req.Topics {
		t := &req.Topics[i]
		if version <= 12 {
			dst = appendString(dst, t.Topic, flexible)
		} else {
			dst = append(dst, t.TopicID[:]...)
		}
		dst = appendArrayLen(dst, len(t.Partitions), flexible)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			dst = kbin.AppendInt32(dst, p.Partition)
			splice := len(p.Records) >= minSplicedRecords && !within(p.Records, frameBody)
			dst = appendBytesLen(dst, p.Records, flexible)
			if splice {
				pieces = append(pieces, recordsPiece{at: len(dst), records: p.Records})
			} else {
				dst = append(dst, p.Records...)
			}
			if flexible {
				dst = appendTags(dst, &p.UnknownTags)
			}
		}
		if flexible {
			dst = appendTags(dst, &t.UnknownTags)
		}
	}
	if flexible {
		dst = appendTags(dst, &req.UnknownTags)
	}
	return dst, pieces
}

// writeFrame writes frame with pieces spliced in.
func writeFrame(w io.Writer, frame []byte, pieces []recordsPiece) error {
	at := 0
	for _, p := range pieces {
		if _, err := w.Write(frame[at:p.at]); err != nil {
			return err
		}
		if _, err := w.Write(p.records); err != nil {
			return err
		}
		at = p.at
	}
	_, err := w.Write(frame[at:])
	return err
}

// splicedBytes is the bytes of records appendProduceFrame would splice
// into req's frame rather than copy.
func splicedBytes(req *kmsg.ProduceRequest, frameBody []byte) int {
	n := 0
	for i := range req.Topics {
		for _, p := range req.Topics[i].Partitions {
			if len(p.Records) >= minSplicedRecords && !within(p.Records, frameBody) {
				n += len(p.Records)
			}
		}
	}
	return n
}

// The field encodings of the Kafka protocol, as kmsg writes them.

func appendArrayLen(dst []byte, n int, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactArrayLen(dst, n)
	}
	return kbin.AppendArrayLen(dst, n)
}

func appendString(dst []byte, s string, flexible bool) []byte {
	if flexible {
		dst = kbin.AppendUvarint(dst, 1+uint32(len(s)))
	} else {
		dst = kbin.AppendInt16(dst, int16(len(s)))
	}
	return append(dst, s...)
}

func appendNullableString(dst []byte, s *string, flexible bool) []byte {
	switch {
	case s != nil:
		return appendString(dst, *s, flexible)
	case flexible:
		return append(dst, 0)
	default:
		return kbin.AppendInt16(dst, -1)
	}
}

// appendBytesLen writes the length of the nullable bytes b, not b.
func appendBytesLen(dst, b []byte, flexible bool) []byte {
	switch {
	case b == nil && flexible:
		return append(dst, 0)
	case b == nil:
		return kbin.AppendInt32(dst, -1)
	case flexible:
		return kbin.AppendUvarint(dst, 1+uint32(len(b)))
	default:
		return kbin.AppendInt32(dst, int32(len(b)))
	}
}

func appendTags(dst []byte, t *kmsg.Tags) []byte {
	dst = kbin.AppendUvarint(dst, uint32(t.Len()))
	return t.AppendEach(dst)
}
