package testkit

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DenseRequestBody is a valid body of about size bytes for key at version
// whose first top-level array holds as many default (near-empty) elements
// as fit: the encoding that makes kmsg allocate the most memory per wire
// byte. It reports false for a key whose version has no such array.
func DenseRequestBody(key, version int16, size int) ([]byte, bool) {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, false
	}
	req.SetVersion(version)
	empty := len(req.AppendTo(nil))
	v := reflect.ValueOf(req).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Slice || f.Type().Elem().Kind() == reflect.Uint8 || !v.Type().Field(i).IsExported() {
			continue
		}
		f.Set(reflect.Append(f, newDefault(f.Type().Elem())))
		per := len(req.AppendTo(nil)) - empty
		if per <= 0 {
			f.Set(reflect.Zero(f.Type()))
			continue // not in this version
		}
		n := max(1, (size-empty)/per)
		s := reflect.MakeSlice(f.Type(), n, n)
		elem := newDefault(f.Type().Elem())
		for j := range n {
			s.Index(j).Set(elem)
		}
		f.Set(s)
		return req.AppendTo(nil), true
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
