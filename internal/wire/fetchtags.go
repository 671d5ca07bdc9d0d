package wire

import "fmt"

// ResponseHasTopLevelTags reports whether a response body of a, at
// version, carries any top-level tagged field. KIP-951 puts the leader
// endpoints (tag 0) there, and only when some partition's leader moved, so
// a response without top-level tags has no broker address in it. It needs
// a's WalkToTags, and is false for a version that is not flexible. The walk
// skips record batches by length; it allocates only its 24-byte cursor
// (handed to the Stepper-generic walk, so it escapes), and an error.
func (a API) ResponseHasTopLevelTags(version int16, body []byte) (bool, error) {
	if a.WalkToTags == nil {
		return false, fmt.Errorf("%s response: no walk to its tags: %w", a.Name, ErrUnsupportedVersion)
	}
	if !IsFlexible(a.Key, version) {
		return false, nil
	}
	s := &sliceStepper{b: body}
	if err := a.WalkToTags(version, s); err != nil {
		return false, err
	}
	return endsWithTags(s, a.Key, version)
}

// ErrorWalker reads the error codes of response bodies in memory. A
// connection keeps one, so that its walks allocate nothing.
type ErrorWalker struct{ s sliceStepper }

// ResponseErrorCodes hands errs the non-zero error codes of a response
// body of a at version, as a's WalkToTags passes them (the partitions' of
// Produce and Fetch, and Fetch's top-level one), without decoding it. It
// needs a's WalkToTags and a flexible version, and otherwise does nothing.
func (w *ErrorWalker) ResponseErrorCodes(a API, version int16, body []byte, errs ErrorNoter) error {
	if a.WalkToTags == nil || !IsFlexible(a.Key, version) {
		return nil
	}
	w.s = sliceStepper{b: body, errs: errs}
	err := a.WalkToTags(version, &w.s)
	w.s = sliceStepper{} // keeps neither body nor errs alive
	return err
}

// endsWithTags checks that the final, top-level tag section ends the body,
// and reports whether it holds any field.
func endsWithTags(s *sliceStepper, key, version int16) (bool, error) {
	nonEmpty, err := TagSectionHasFields(s.b)
	if err != nil {
		return false, fmt.Errorf("%s v%d response: %w", APIName(key), version, err)
	}
	return nonEmpty, nil
}

// TagSectionHasFields checks that b is exactly one tagged-field section and
// reports whether it holds any field.
func TagSectionHasFields(b []byte) (bool, error) {
	if len(b) == 1 && b[0] == 0 { // empty, as nearly every response: no allocation
		return false, nil
	}
	s := &sliceStepper{b: b}
	err := WalkTags(s)
	if err == nil && len(s.b) != 0 {
		err = fmt.Errorf("%d bytes after the tag section: %w", len(s.b), ErrMalformed)
	}
	if err != nil {
		return false, err
	}
	return b[0] != 0, nil // the tag count, a uvarint: zero only as one 0 byte
}
