package wire

import "errors"

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
	s := &recordsStepper{sliceStepper: sliceStepper{b: body}, match: match}
	switch err := WalkFetchResponseToTags(version, s); {
	case errors.Is(err, errFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, nil
}

// recordsStepper is an in-memory Stepper that shows match each large
// value it passes (in a Fetch response, each partition's records) and
// stops the walk with errFound at the first match accepts.
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
