// Package errclass marks an error as belonging to a class, a sentinel a
// caller tests with errors.Is, while keeping the error's own message and
// chain. The KMS and the object store class their errors this way
// (unavailable key or object, retriable, rejected), so that a filter
// decides what to answer from the class alone.
package errclass

// Mark returns err marked as being of class: errors.Is(result, class)
// holds, and errors.Is and errors.As still reach err's own chain. Mark of
// a nil err is nil.
func Mark(class, err error) error {
	if err == nil {
		return nil
	}
	return &marked{class: class, err: err}
}

type marked struct{ class, err error }

func (m *marked) Error() string   { return m.class.Error() + ": " + m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.class, m.err} }
