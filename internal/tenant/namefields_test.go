package tenant

import (
	"reflect"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// nameKind is what a name-bearing field of a kmsg message holds.
type nameKind uint8

const (
	kindNone nameKind = iota
	kindTopic
	kindTopicID
	kindTopicRegex // a regex over topic names (KIP-848 subscriptions, streams source topics)
	kindGroup
	kindTxnID
	kindResource  // ResourceName: a topic when the resource type says so (the filler sets topic)
	kindClusterID // the cluster id: the virtual cluster's own, when set
)

// classify says what the field called name of type t holds, by name and
// type, the way kmsg names such fields: a kmsg upgrade that adds a field
// called like these is found by the completeness test.
func classify(path, name string, t reflect.Type) nameKind {
	base := t
	for base.Kind() == reflect.Pointer || base.Kind() == reflect.Slice {
		base = base.Elem()
	}
	isID := base.Kind() == reflect.Array && base.Len() == 16 && base.Elem().Kind() == reflect.Uint8
	isString := base.Kind() == reflect.String
	if !isID && !isString {
		return kindNone
	}
	switch {
	case isID && (strings.HasPrefix(name, "Topic") || name == "TopidID"):
		return kindTopicID
	case isID:
		return kindNone // directory, incarnation, voter ids
	case strings.Contains(name, "Topic") && strings.Contains(name, "Regex"):
		return kindTopicRegex
	case strings.Contains(name, "Topic"):
		return kindTopic
	case name == "Group" || name == "Groups" || name == "GroupID" || name == "GroupIDs" ||
		name == "CoordinatorKey" || name == "CoordinatorKeys":
		return kindGroup
	case strings.HasPrefix(name, "TransactionalID") || name == "TransactionID":
		return kindTxnID
	case name == "ResourceName":
		return kindResource
	case name == "ClusterID":
		return kindClusterID
	case strings.HasSuffix(path, "ConfigResources.Name"): // ListConfigResources
		return kindResource
	}
	return kindNone
}

// nameField is one name-bearing field of a message type: its path ("req."
// or "resp." then the Go field names, slices and pointers implicit).
type nameField struct {
	path string
	kind nameKind
}

// nameFields lists the name-bearing fields of message type t (a pointer to
// a kmsg struct), under prefix.
func nameFields(prefix string, t reflect.Type) []nameField {
	var out []nameField
	walkFieldTypes(prefix, t, func(p string, f reflect.StructField) bool {
		if k := classify(p, f.Name, f.Type); k != kindNone {
			out = append(out, nameField{p, k})
			return true
		}
		return false
	})
	return out
}

// walkFieldTypes calls leaf with the path of every exported field of the
// message type t and of the structs it holds (slices and pointers
// implicit), under prefix; it looks into a field's type unless leaf
// reports that the field is a leaf.
func walkFieldTypes(prefix string, t reflect.Type, leaf func(path string, f reflect.StructField) bool) {
	var walk func(path string, t reflect.Type, depth int)
	walk = func(path string, t reflect.Type, depth int) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || depth > 12 {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Name == "UnknownTags" {
				continue
			}
			if p := path + "." + f.Name; !leaf(p, f) {
				walk(p, f.Type, depth+1)
			}
		}
	}
	walk(prefix, t, 0)
}

// fillMessage gives every slice of structs one element and every pointer
// to a struct a value, sets ResourceType-like fields to topic (2), and
// calls set for each name-bearing field with its path.
func fillMessage(prefix string, v reflect.Value, set func(path string, kind nameKind, field reflect.Value)) {
	walkFieldValues(prefix, v, true, func(p string, f reflect.StructField, fv reflect.Value) bool {
		switch {
		case (f.Name == "ResourceType" || f.Name == "Type") && fv.CanInt():
			fv.SetInt(int64(kmsg.ConfigResourceTypeTopic)) // 2 is topic for ACLs and configs alike
		case f.Name == "ResourcePatternType" && fv.CanInt():
			fv.SetInt(int64(kmsg.ACLResourcePatternTypeLiteral))
		default:
			k := classify(p, f.Name, f.Type)
			if k == kindNone {
				return false
			}
			set(p, k, fv)
		}
		return true
	})
}

// fieldValues collects every value at the name-bearing fields of v, by
// path: strings as they are, ids as strings of their bytes.
func fieldValues(prefix string, v reflect.Value) map[string][]string {
	out := map[string][]string{}
	walkFieldValues(prefix, v, false, func(p string, f reflect.StructField, fv reflect.Value) bool {
		if classify(p, f.Name, f.Type) == kindNone {
			return false
		}
		out[p] = append(out[p], stringsOf(fv)...)
		return true
	})
	return out
}

// walkFieldValues calls leaf with the path and value of every exported
// field of v and of the structs it holds (slices and pointers implicit),
// under prefix; it looks into a field unless leaf reports that the field
// is a leaf. With grow, an empty slice of structs first gets one element
// and a nil pointer to a struct a value.
func walkFieldValues(prefix string, v reflect.Value, grow bool, leaf func(path string, f reflect.StructField, fv reflect.Value) bool) {
	var walk func(path string, v reflect.Value, depth int)
	walk = func(path string, v reflect.Value, depth int) {
		if depth > 12 {
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.Type().Elem().Kind() != reflect.Struct || (v.IsNil() && !grow) {
				return
			}
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			walk(path, v.Elem(), depth)
		case reflect.Slice:
			if v.Type().Elem().Kind() != reflect.Struct {
				return
			}
			if v.Len() == 0 && grow {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			for i := range v.Len() {
				walk(path, v.Index(i), depth)
			}
		case reflect.Struct:
			t := v.Type()
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() || f.Name == "UnknownTags" {
					continue
				}
				if p := path + "." + f.Name; !leaf(p, f, v.Field(i)) {
					walk(p, v.Field(i), depth+1)
				}
			}
		}
	}
	walk(prefix, v, 0)
}

// stringsOf is what a name field holds: nothing for null or zero.
func stringsOf(v reflect.Value) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return stringsOf(v.Elem())
	case reflect.String:
		if v.String() == "" {
			return nil
		}
		return []string{v.String()}
	case reflect.Array:
		var id [16]byte
		reflect.Copy(reflect.ValueOf(&id).Elem(), v)
		if id == ([16]byte{}) {
			return nil
		}
		return []string{string(id[:])}
	case reflect.Slice:
		var out []string
		for i := range v.Len() {
			out = append(out, stringsOf(v.Index(i))...)
		}
		return out
	}
	return nil
}

// setName sets a name field to s (a string kind) or id (an id kind).
func setName(v reflect.Value, s string, id [16]byte) {
	switch v.Kind() {
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		setName(nv.Elem(), s, id)
		v.Set(nv)
	case reflect.String:
		v.SetString(s)
	case reflect.Array:
		reflect.Copy(v, reflect.ValueOf(id))
	case reflect.Slice:
		nv := reflect.MakeSlice(v.Type(), 1, 1)
		setName(nv.Index(0), s, id)
		v.Set(nv)
	}
}
