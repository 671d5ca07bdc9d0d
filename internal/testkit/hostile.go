package testkit

import (
	"bytes"
	"encoding/binary"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DenseRequestBody is a valid body of about size bytes for key at version
// whose first top-level array holds as many default (near-empty) elements
// as fit: the encoding that makes kmsg allocate the most memory per wire
// byte. It reports false for a key whose version has no such array.
//
// kmsg encodes the message with one and with two elements; the element's
// bytes are the difference, and the body is built by repeating them, so a
// body of millions of elements costs a copy, not millions of reflected
// values (which took minutes under the race detector).
func DenseRequestBody(key, version int16, size int) ([]byte, bool) {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, false
	}
	req.SetVersion(version)
	flexible := req.IsFlexible()
	v := reflect.ValueOf(req).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Slice || f.Type().Elem().Kind() == reflect.Uint8 || !v.Type().Field(i).IsExported() {
			continue
		}
		elem := newDefault(f.Type().Elem())
		encodeWith := func(n int) []byte {
			s := reflect.MakeSlice(f.Type(), n, n)
			for j := range n {
				s.Index(j).Set(elem)
			}
			f.Set(s)
			defer f.Set(reflect.Zero(f.Type()))
			return req.AppendTo(nil)
		}
		one, two := encodeWith(1), encodeWith(2)
		per := len(two) - len(one)
		if per <= 0 {
			continue // not in this version
		}
		// The count is the first byte that differs: the last byte of an
		// int32 count (1 vs 2), or a compact count (2 vs 3) of one byte.
		diff := 0
		for one[diff] == two[diff] {
			diff++
		}
		countLen, start := 1, diff
		if !flexible {
			countLen, start = 4, diff-3
		}
		prefix := one[:start]
		element := one[start+countLen : start+countLen+per]
		suffix := one[start+countLen+per:]
		build := func(n int) []byte {
			body := append([]byte(nil), prefix...)
			if flexible {
				body = binary.AppendUvarint(body, uint64(n)+1)
			} else {
				body = binary.BigEndian.AppendUint32(body, uint32(n))
			}
			body = append(body, bytes.Repeat(element, n)...)
			return append(body, suffix...)
		}
		if !bytes.Equal(build(3), encodeWith(3)) {
			continue // not a plain array (a tagged field, say)
		}
		return build(max(1, (size-len(one))/per)), true
	}
	return nil, false
}

func newDefault(t reflect.Type) reflect.Value {
	ptr := reflect.New(t)
	if d, ok := ptr.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	return ptr.Elem()
}
