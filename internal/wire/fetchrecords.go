package wire

import (
	"errors"
	"fmt"
)

// errFound stops a records walk at the partition it was looking for.
var errFound = errors.New("found")

// AnyFetchRecords reports whether match accepts the records of some
// partition of a flexible (v12+) Fetch response body, asking partition by
// partition until one does. It walks the body as WalkFetchResponseToTags
// does: nothing is decoded and nothing allocated but the cursor. An error
// is a body that is not a flexible Fetch response of version; the caller
// then decodes it (and reports what is wrong). match must not keep
// records.
func AnyFetchRecords(version int16, body []byte, match func(records []byte) bool) (bool, error) {
	return anyRecords(WalkFetchResponseToTags, version, body, match)
}

// AnyShareFetchRecords is AnyFetchRecords for ShareFetch response bodies.
func AnyShareFetchRecords(version int16, body []byte, match func(records []byte) bool) (bool, error) {
	return anyRecords(walkShareFetchRecords, version, body, match)
}

// anyRecords runs walk, which passes each partition's records with
// SkipLarge, over body until match accepts some.
func anyRecords(walk func(int16, Stepper) error, version int16, body []byte, match func(records []byte) bool) (bool, error) {
	s := &recordsStepper{sliceStepper: sliceStepper{b: body}, match: match}
	switch err := walk(version, s); {
	case errors.Is(err, errFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, nil
}

// recordsStepper is an in-memory Stepper that shows match each large
// value it passes (each partition's records) and stops the walk with
// errFound at the first match accepts.
type recordsStepper struct {
	sliceStepper
	match func(records []byte) bool
}

func (s *recordsStepper) SkipLarge(n int) error {
	if n < 0 || n > len(s.b) {
		return ErrShortBuffer
	}
	if s.match(s.b[:n]) {
		return errFound
	}
	s.b = s.b[n:]
	return nil
}

// walkShareFetchRecords moves s over a ShareFetch response body (KIP-932;
// every version flexible) through its topics, records passed with
// SkipLarge; the node endpoints after them are left unread. A version
// after the two it knows is refused: its fields may have moved.
func walkShareFetchRecords(version int16, s Stepper) error {
	if version < 0 || version > 1 {
		return fmt.Errorf("share fetch v%d: %w", version, ErrUnsupportedVersion)
	}
	w := stepWalker{s: s}
	w.skip(4) // throttle_time_ms
	w.errorCode()
	w.bytes(false) // error_message
	if version >= 1 {
		w.skip(4) // acquisition_lock_timeout_ms
	}
	w.topicPartitions(true, func() {
		w.skip(4) // partition_index
		w.errorCode()
		w.bytes(false) // error_message
		w.errorCode()  // acknowledge_error_code
		w.bytes(false) // acknowledge_error_message
		w.skip(4 + 4)  // current_leader: leader_id, leader_epoch
		w.tags()
		w.bytes(true) // records
		acquired := w.arrayLen()
		for a := 0; a < acquired && w.err == nil; a++ {
			w.skip(8 + 8 + 2) // first_offset, last_offset, delivery_count
			w.tags()
		}
	})
	return w.err
}
