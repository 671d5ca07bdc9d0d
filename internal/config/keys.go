package config

import (
	"reflect"
	"strings"
	"time"
)

// fileKey is one key of the configuration file, as reflection over
// Config's yaml tags finds it.
type fileKey struct {
	// Path is the key as Reference writes it (name[] for a list of
	// sections).
	Path string
	// Field is the Go field behind it.
	Field reflect.StructField
}

var durationType = reflect.TypeFor[time.Duration]()

// yamlName is the key a struct field is written as; inline reports a
// field whose keys sit directly in its parent, skip one never written. A
// field tagged section:"NAME" holds a filter's section the core decoder
// leaves to the section's factory (sections.go): it is written NAME.
func yamlName(f reflect.StructField) (name string, inline, skip bool) {
	if section := f.Tag.Get("section"); section != "" {
		return section, false, false
	}
	tag := f.Tag.Get("yaml")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" || !f.IsExported() {
		return "", false, true
	}
	if strings.Contains(","+opts+",", ",inline,") {
		return "", true, false
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, false, false
}

// sectionType is the struct a key holds, if it is a section (a struct,
// a pointer to one, or a list of them), and whether it is a list.
func sectionType(t reflect.Type) (st reflect.Type, list bool, ok bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
		return t.Elem(), true, true
	}
	if t.Kind() == reflect.Struct && t != durationType {
		return t, false, true
	}
	return nil, false, false
}

// fieldKey is one key of a section in a configuration: its field, name,
// path ("[]" after a list of sections) and value, and whether it holds a
// section or a list of them.
type fieldKey struct {
	field         reflect.StructField
	name, path    string
	value         reflect.Value
	list, section bool
}

// fieldKeys lists the keys of struct v, whose path is prefix, in field
// order.
func fieldKeys(v reflect.Value, prefix string) []fieldKey {
	fields := structKeys(v.Type())
	keys := make([]fieldKey, 0, len(fields))
	for _, f := range fields {
		name, _, _ := yamlName(f)
		_, list, section := sectionType(f.Type)
		path := prefix + name
		if list {
			path += "[]"
		}
		keys = append(keys, fieldKey{field: f, name: name, path: path, value: v.FieldByIndex(f.Index), list: list, section: section})
	}
	return keys
}

// structKeys lists the keys of struct type t, inline fields' keys in place.
func structKeys(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		_, inline, skip := yamlName(f)
		switch {
		case skip:
		case inline && f.Type.Kind() == reflect.Map:
			// Keys no core section has, which filters' sections claim.
		case inline:
			for _, g := range structKeys(f.Type) {
				g.Index = append([]int{i}, g.Index...)
				out = append(out, g)
			}
		default:
			out = append(out, f)
		}
	}
	return out
}

// fileKeys lists every key of the file, depth first in field order.
func fileKeys() []fileKey { return typeKeys(reflect.TypeFor[Config](), "") }

// typeKeys lists the keys of a section of struct type t at prefix (its
// path and a dot, or "" for the file), depth first in field order.
func typeKeys(t reflect.Type, prefix string) []fileKey {
	var out []fileKey
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for _, f := range structKeys(t) {
			name, _, _ := yamlName(f)
			path := prefix + name
			st, list, section := sectionType(f.Type)
			if list {
				path += "[]"
			}
			out = append(out, fileKey{Path: path, Field: f})
			if section {
				walk(st, path+".")
			}
		}
	}
	walk(t, prefix)
	return out
}

// keyValues lists every key of the file with its value in c, depth first
// in field order; the entries of a list of sections are read from its
// first entry, and a nil section's keys are left out.
func keyValues(c *Config) []keyValue {
	var out []keyValue
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		for _, k := range fieldKeys(v, prefix) {
			fv := k.value
			out = append(out, keyValue{Path: k.path, Field: k.field, Value: fv})
			switch {
			case !k.section:
			case k.list:
				if fv.Len() > 0 {
					walk(fv.Index(0), k.path+".")
				}
			case fv.Kind() == reflect.Pointer:
				if !fv.IsNil() {
					walk(fv.Elem(), k.path+".")
				}
			default:
				walk(fv, k.path+".")
			}
		}
	}
	walk(reflect.ValueOf(c).Elem(), "")
	return out
}

// keyValue is a key of the file with its value in one configuration.
type keyValue struct {
	Path  string
	Field reflect.StructField
	Value reflect.Value
}
