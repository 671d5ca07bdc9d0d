package wire

import (
	"bytes"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A wire shape is the layout of one kmsg message type at one version: the
// untagged fields in wire order and, per array, the Go size of one element.
// kmsg exposes no schema, so shapes are learned from kmsg itself: the Go
// struct gives the fields and their types, and encoding the message with a
// field set and unset (kmsg's encoder is the reference) tells whether that
// version carries the field and whether it is tagged. A kmsg upgrade that
// adds fields, versions or messages therefore changes the shapes with it;
// TestShapesMatchKmsg checks every shape against kmsg's own encodings.

// wireKind is how a field is encoded.
type wireKind uint8

const (
	wireFixed          wireKind = iota // fixed-width integer, bool, float or uuid
	wireString                         // (compact) string
	wireNullableString                 // (compact) nullable string: kmsg allocates a *string
	wireBytes                          // (compact) bytes, nullable or not
	wireArray                          // (compact) array, nullable or not
	wireNullableStruct                 // int8 presence marker, then the struct
	wireStruct                         // a struct inline
)

// wireField is one untagged field, or an array's element.
type wireField struct {
	kind  wireKind
	fixed int        // wireFixed: width in bytes
	elem  *wireField // wireArray: the element
	// goSize is the memory kmsg allocates per element of an array of this
	// field, or for a nullable struct when present.
	goSize int
	shape  *wireShape // struct kinds: the struct's layout
}

// wireShape is the layout of a struct at one version.
type wireShape struct {
	fields   []wireField
	flexible bool // a tag section ends the struct
	// tagRatio bounds the memory kmsg allocates per byte of this struct's
	// tagged fields, which are decoded into structs (known tags) or kept
	// aside (unknown ones).
	tagRatio int
}

// Shapes are kept per key in the API table (APITable.shapes), learned the
// first time one of the key's shapes is looked up, and never change after:
// a kproxy that decodes a handful of APIs (passthrough decodes only those
// carrying addresses) pays memory and start-up time for those alone.

// keyShapes is one API key's shapes, per version.
type keyShapes struct {
	requests, responses []*wireShape
}

// learnKeyShapes learns the shapes of a's messages up to maxVersion, from
// the row's own constructors.
func learnKeyShapes(a API, maxVersion int16) keyShapes {
	var ks keyShapes
	for v := int16(0); v <= maxVersion; v++ {
		ks.requests = append(ks.requests, learnShape(func() message { return a.NewRequest() }, v))
		ks.responses = append(ks.responses, learnShape(func() message { return a.NewResponse() }, v))
	}
	return ks
}

// shape returns the shape of version of key's request (or response), or
// nil if t has none.
func (t *APITable) shape(key, version int16, response bool) *wireShape {
	if !t.KnownAPI(key) {
		return nil
	}
	ks := t.shapes[key]()
	table := ks.requests
	if response {
		table = ks.responses
	}
	if version < 0 || int(version) >= len(table) {
		return nil
	}
	return table[version]
}

// message is what shapes are learned from: a kmsg request or response.
type message interface {
	SetVersion(int16)
	AppendTo([]byte) []byte
	IsFlexible() bool
}

// prober learns shapes of one message type at one version by encoding
// variants of it.
type prober struct {
	newMsg  func() message
	version int16
}

func learnShape(newMsg func() message, version int16) *wireShape {
	m := newMsg()
	if m == nil {
		return nil
	}
	p := prober{newMsg: newMsg, version: version}
	m.SetVersion(version)
	return p.shape(nil, reflect.TypeOf(m).Elem(), m.IsFlexible())
}

var tagsType = reflect.TypeOf(kmsg.Tags{})

// shape learns the layout of struct type t, reached from the message root
// by path (field indexes; a slice step means its first element).
func (p prober) shape(path []int, t reflect.Type, flexible bool) *wireShape {
	s := &wireShape{flexible: flexible, tagRatio: 1}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type == tagsType || (len(path) == 0 && f.Name == "Version") || !f.IsExported() {
			continue
		}
		inner := append(path[:len(path):len(path)], i)
		if f.Type.Kind() == reflect.Struct {
			if present, tagged := p.inlineStruct(inner, f.Type); present && !tagged {
				s.fields = append(s.fields, p.field(inner, f.Type, flexible))
			} else if present {
				s.tagRatio = max(s.tagRatio, p.field(inner, f.Type, flexible).ratio(flexible))
			}
			continue
		}
		base := p.encode(path, i, 0)
		one := p.encode(path, i, 1)
		if bytes.Equal(base, one) {
			continue // not in this version
		}
		field := p.field(inner, f.Type, flexible)
		if p.tagged(field, path, i, base, one) {
			s.tagRatio = max(s.tagRatio, field.ratio(flexible))
			continue
		}
		s.fields = append(s.fields, field)
	}
	return s
}

// tagged says whether the field at path+i is a tagged field: kmsg omits a
// tagged field at its default, so setting it adds a tag number and size on
// top of what an untagged field of its type would grow by.
func (p prober) tagged(f wireField, path []int, i int, base, one []byte) bool {
	if f.kind == wireFixed {
		return len(one) != len(base) // an untagged fixed field keeps its width
	}
	if f.kind == wireNullableStruct || f.kind == wireStruct {
		return len(one)-len(base) > f.shape.minWire()+1
	}
	two := p.encode(path, i, 2)
	return len(one)-len(base) >= len(two)-len(one)+2
}

// inlineStruct says whether the struct field at path (of type t) is in the
// message at this version, and whether it is a tagged field: setting one of
// its fixed-width fields changes the encoding's bytes, and, for a tagged
// struct (omitted while all its fields are at their defaults), its length.
func (p prober) inlineStruct(path []int, t reflect.Type) (present, tagged bool) {
	base := p.encode(path[:len(path)-1], path[len(path)-1], 0)
	for c := 0; c < t.NumField(); c++ {
		switch t.Field(c).Type.Kind() {
		case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float64, reflect.Array:
		default:
			continue
		}
		if !t.Field(c).IsExported() || t.Field(c).Type == tagsType {
			continue
		}
		if one := p.encode(path, c, 1); !bytes.Equal(base, one) {
			return true, len(one) != len(base)
		}
	}
	return len(p.shape(path, t, false).fields) > 0, false
}

// field describes a field of Go type t found at path.
func (p prober) field(path []int, t reflect.Type, flexible bool) wireField {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Uint8:
		return wireField{kind: wireFixed, fixed: 1}
	case reflect.Int16, reflect.Uint16:
		return wireField{kind: wireFixed, fixed: 2}
	case reflect.Int32, reflect.Uint32, reflect.Float32:
		return wireField{kind: wireFixed, fixed: 4}
	case reflect.Int64, reflect.Uint64, reflect.Float64:
		return wireField{kind: wireFixed, fixed: 8}
	case reflect.Array:
		return wireField{kind: wireFixed, fixed: int(t.Size())}
	case reflect.String:
		return wireField{kind: wireString}
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.String {
			return wireField{kind: wireNullableString, goSize: int(t.Elem().Size())}
		}
		return wireField{kind: wireNullableStruct, goSize: int(t.Elem().Size()), shape: p.shape(path, t.Elem(), flexible)}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return wireField{kind: wireBytes}
		}
		elem := p.field(path, t.Elem(), flexible)
		return wireField{kind: wireArray, elem: &elem, goSize: int(t.Elem().Size())}
	case reflect.Struct:
		return wireField{kind: wireStruct, shape: p.shape(path, t, flexible)}
	}
	panic("wire: kmsg field of unexpected type " + t.String())
}

// encode encodes a fresh message with the field at path+i set to variant
// n: 0 leaves it at its default, 1 and 2 set it to non-default values, 2
// one byte or element longer than 1 for variable-size types. Every slice
// on path gets one default element so the field is on the wire.
func (p prober) encode(path []int, i, n int) []byte {
	m := p.newMsg()
	m.SetVersion(p.version)
	v := reflect.ValueOf(m).Elem()
	for _, step := range path {
		v = descend(v.Field(step))
	}
	if n > 0 {
		setVariant(v.Field(i), n)
	}
	return m.AppendTo(nil)
}

// descend makes room for one value behind f (a slice's first element, a
// pointer's target) and returns that value.
func descend(f reflect.Value) reflect.Value {
	switch f.Kind() {
	case reflect.Slice:
		if f.Len() == 0 {
			f.Set(reflect.Append(f, newDefault(f.Type().Elem())))
		}
		return descend(f.Index(0))
	case reflect.Pointer:
		if f.IsNil() {
			ptr := reflect.New(f.Type().Elem())
			ptr.Elem().Set(newDefault(f.Type().Elem()))
			f.Set(ptr)
		}
		return f.Elem()
	}
	return f
}

// newDefault is a value of t as kmsg's constructors make it.
func newDefault(t reflect.Type) reflect.Value {
	ptr := reflect.New(t)
	if d, ok := ptr.Interface().(interface{ Default() }); ok {
		d.Default()
	}
	return ptr.Elem()
}

func setVariant(f reflect.Value, n int) {
	switch f.Kind() {
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.SetInt(f.Int() + int64(n))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.SetUint(f.Uint() + uint64(n))
	case reflect.Float32, reflect.Float64:
		f.SetFloat(f.Float() + float64(n))
	case reflect.Array:
		f.Index(0).SetUint(f.Index(0).Uint() + uint64(n))
	case reflect.String:
		f.SetString(string(bytes.Repeat([]byte{'a'}, n)))
	case reflect.Pointer:
		if f.Type().Elem().Kind() == reflect.String {
			s := string(bytes.Repeat([]byte{'a'}, n))
			f.Set(reflect.ValueOf(&s))
			return
		}
		descend(f)
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.Uint8 {
			f.SetBytes(bytes.Repeat([]byte{1}, n))
			return
		}
		for range n {
			f.Set(reflect.Append(f, newDefault(f.Type().Elem())))
		}
	case reflect.Struct:
		// An inline struct always is on the wire; nothing to vary.
	}
}

// minWire is the fewest bytes an encoding of s takes.
func (s *wireShape) minWire() int {
	n := 0
	for _, f := range s.fields {
		n += f.minWire(s.flexible)
	}
	if s.flexible {
		n++ // empty tag section
	}
	return n
}

func (f wireField) minWire(flexible bool) int {
	switch f.kind {
	case wireFixed:
		return f.fixed
	case wireStruct:
		return f.shape.minWire()
	case wireNullableStruct:
		return 1
	}
	switch {
	case flexible:
		return 1
	case f.kind == wireString || f.kind == wireNullableString:
		return 2
	}
	return 4 // bytes and arrays: int32 length
}

// ratio bounds the memory kmsg allocates per wire byte of f (in a message
// whose flexibility is flexible), over every value it may hold: the worst
// element of any array within it.
func (f wireField) ratio(flexible bool) int {
	switch f.kind {
	case wireArray:
		per := f.goSize + f.elem.extraPerElement()
		return max(f.elem.ratio(flexible), ceilDiv(per, f.elem.minWire(flexible)))
	case wireNullableStruct:
		return max(f.shape.ratio(), ceilDiv(f.goSize, f.minWire(flexible)+f.shape.minWire()))
	case wireStruct:
		return f.shape.ratio()
	}
	return 1
}

func (s *wireShape) ratio() int {
	r := s.tagRatio
	for _, f := range s.fields {
		r = max(r, f.ratio(s.flexible))
	}
	return r
}

// extraPerElement is memory allocated per element besides the element's
// own slot: the string a nullable string points to.
func (f wireField) extraPerElement() int {
	if f.kind == wireNullableString {
		return f.goSize
	}
	return 0
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return a
	}
	return (a + b - 1) / b
}
