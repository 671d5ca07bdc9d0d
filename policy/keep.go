package policy

import "slices"

// keepOnly keeps, in place and in order, the elements of s that keep
// holds for, and zeroes the rest of the backing array so that what was
// dropped (hidden names) is not retained.
func keepOnly[S ~[]E, E any](s S, keep func(E) bool) S {
	return slices.DeleteFunc(s, func(e E) bool { return !keep(e) })
}
