package policy

import "reflect"

// topicKey identifies a topic entry in a request or its response: by name,
// or by id in the versions that name topics by id.
type topicKey struct {
	name string
	id   [16]byte
}

// mergeInOrder rebuilds a response list in the order the client asked.
// keys holds the key of each entry of the client's original request and
// synth the policy's answer for entry i, if the policy answered it. The
// upstream's entries are matched to the request's by key, first come first
// served; any it sent that match no request entry keep their relative
// order at the end rather than being lost.
func mergeInOrder[T any, K comparable](upstream []T, keyOf func(*T) K, keys []K, synth func(i int) (T, bool)) []T {
	pending := make(map[K][]int, len(upstream))
	for i := range upstream {
		k := keyOf(&upstream[i])
		pending[k] = append(pending[k], i)
	}
	used := make([]bool, len(upstream))
	out := make([]T, 0, len(keys)+len(upstream))
	for i, k := range keys {
		if t, ok := synth(i); ok {
			out = append(out, t)
			continue
		}
		if idx := pending[k]; len(idx) > 0 {
			out = append(out, upstream[idx[0]])
			used[idx[0]] = true
			pending[k] = idx[1:]
		}
	}
	for i := range upstream {
		if !used[i] {
			out = append(out, upstream[i])
		}
	}
	return out
}

// keepAllowed returns a new slice of the entries of list whose denial is
// nil. list itself is left intact: merges still read it.
func keepAllowed[T any](list []T, denials []*denial) []T {
	out := make([]T, 0, len(list))
	for i := range list {
		if denials[i] == nil {
			out = append(out, list[i])
		}
	}
	return out
}

// countDenied is how many entries of denials are set.
func countDenied(denials []*denial) int {
	n := 0
	for _, d := range denials {
		if d != nil {
			n++
		}
	}
	return n
}

// denialAt returns denials[i] and whether it is set, the shape synth
// functions need.
func denialAt(denials []*denial, i int) (*denial, bool) {
	return denials[i], denials[i] != nil
}

// topicDenials decides each of n topics of a request: at(i) names topic i
// (by name, or by id), and check decides a named topic. It returns every
// topic's key, its denial (nil: allowed) and how many were denied; when
// none was, keys and denials are nil, so that the common, allowed case
// allocates nothing. Topic ids kproxy cannot name, or that name a topic
// the principal may not describe, are denied with UNKNOWN_TOPIC_ID
// (checkTopicRef).
func (c *reqCtx) topicDenials(n int, at func(i int) (string, [16]byte), check func(name string) *denial) ([]topicKey, []*denial, int) {
	var denials []*denial
	denied := 0
	for i := 0; i < n; i++ {
		name, id := at(i)
		d := c.checkTopicRef(name, id, check)
		if d == nil {
			continue
		}
		if denials == nil {
			denials = make([]*denial, n)
		}
		denials[i] = d
		denied++
	}
	if denied == 0 {
		return nil, nil, 0
	}
	keys := make([]topicKey, n)
	for i := range keys {
		name, id := at(i)
		keys[i] = topicKey{name, id}
	}
	return keys, denials, denied
}

// entryAnswering is a fresh T, a response's entry for one named resource
// with kmsg's defaults, that names name in its string field nameField and
// answers it with d's error code and, where T has the field, its message.
func entryAnswering[T any](nameField, name string, d *denial) T {
	t := errorEntry[T](d)
	reflect.ValueOf(&t).Elem().FieldByName(nameField).SetString(name)
	return t
}

// errorEntry is a fresh T, a response's entry with kmsg's defaults,
// answered with d's error code and, where T has the field, its message.
func errorEntry[T any](d *denial) T {
	var t T
	if def, ok := any(&t).(interface{ Default() }); ok {
		def.Default()
	}
	v := reflect.ValueOf(&t).Elem()
	v.FieldByName("ErrorCode").SetInt(int64(d.code))
	if msg := v.FieldByName("ErrorMessage"); msg.IsValid() && msg.Type() == stringPtrType {
		msg.Set(reflect.ValueOf(d.msgPtr()))
	}
	return t
}

// errorEntries is n entries answered with d (errorEntry).
func errorEntries[T any](n int, d *denial) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = errorEntry[T](d)
	}
	return out
}
