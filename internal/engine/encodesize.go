package engine

import (
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// producedRecords is the bytes of records a Produce request carries, and
// in how many partitions (0 for other requests): what a filter rewriting
// records (encryption) may grow, and so what the re-encoded frame's size
// differs by.
func producedRecords(req kmsg.Request) (bytes, partitions int) {
	p, ok := req.(*kmsg.ProduceRequest)
	if !ok {
		return 0, 0
	}
	for _, t := range p.Topics {
		for _, pt := range t.Partitions {
			bytes += len(pt.Records)
			partitions++
		}
	}
	return bytes, partitions
}

// encodedSizeHint is about the size of w's request re-encoded: the frame
// it arrived in, plus what the handlers added to its records. Encoding
// into a buffer of that size costs no growing by appends, which would
// copy the frame several times over.
func encodedSizeHint(w *wholeRequest) int {
	now, partitions := producedRecords(w.req)
	// 5 a partition: a longer records length takes up to 5 bytes more
	// as a compact length (none as an int32).
	return w.frameLen + max(now-w.records, 0) + 5*partitions
}

// freshRecords is the bytes of records in a Produce request or a Fetch
// response that do not lie in frame: copies a filter made (encryption
// seals or opens them into buffers of its own), which live until the
// message is encoded and so count against limits.max_buffered_bytes like
// the frame itself.
func freshRecords(msg any, frame []byte) int {
	n := 0
	add := func(records []byte) {
		if len(records) > 0 && !within(records, frame) {
			n += len(records)
		}
	}
	switch m := msg.(type) {
	case *kmsg.ProduceRequest:
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				add(p.Records)
			}
		}
	case *kmsg.FetchResponse:
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				add(p.RecordBatches)
			}
		}
	case *kmsg.ShareFetchResponse:
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				add(p.Records)
			}
		}
	}
	return n
}

// within reports whether b's bytes lie in frame's memory.
func within(b, frame []byte) bool {
	if len(frame) == 0 {
		return false
	}
	start, end := uintptr(unsafe.Pointer(&frame[0])), uintptr(unsafe.Pointer(&frame[0]))+uintptr(len(frame))
	p := uintptr(unsafe.Pointer(&b[0]))
	return p >= start && p < end
}
