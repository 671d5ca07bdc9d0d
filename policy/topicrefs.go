package policy

import (
	"reflect"
	"strings"
)

// Responses name topics in fields of a few shapes; topicRefs finds them
// by reflection so that a field kmsg adds in an upgrade is covered without
// a change here (TestResponseFieldsNamingResources lists them all).

// topicNameField reports whether field f of struct type st holds topic
// names: a string, *string or []string field whose name says Topic (but
// not a regex), or the Name of a struct that is itself a topic entry
// (TopicInfo, ...Topic, ...TopicPartition).
func topicNameField(st reflect.Type, f reflect.StructField) bool {
	if !isStringish(f.Type) {
		return false
	}
	if strings.Contains(f.Name, "Topic") {
		return !strings.Contains(f.Name, "Regex")
	}
	return f.Name == "Name" && isTopicEntry(st.Name())
}

func isTopicEntry(typeName string) bool {
	return typeName == "TopicInfo" || strings.HasSuffix(typeName, "Topic") || strings.HasSuffix(typeName, "TopicPartition")
}

// topicIDField reports whether f holds a topic id.
func topicIDField(f reflect.StructField) bool {
	return f.Type == reflect.TypeOf([16]byte{}) && strings.Contains(f.Name, "TopicID")
}

func isStringish(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String:
		return true
	case reflect.Pointer, reflect.Slice:
		return t.Elem().Kind() == reflect.String
	}
	return false
}

// topicRefs calls visit for every topic v (a decoded message or part of
// one) names: each name, and each topic id of an entry that does not also
// name its topic. It stops, returning false, when visit returns false.
func topicRefs(v any, visit func(name string, id [16]byte) bool) bool {
	return walkTopicRefs(reflect.ValueOf(v), visit)
}

func walkTopicRefs(v reflect.Value, visit func(name string, id [16]byte) bool) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return true
		}
		return walkTopicRefs(v.Elem(), visit)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return true // bytes: records, metadata blobs
		}
		for i := 0; i < v.Len(); i++ {
			if !walkTopicRefs(v.Index(i), visit) {
				return false
			}
		}
		return true
	case reflect.Struct:
	default:
		return true
	}
	st := v.Type()
	named := false
	var id [16]byte
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		fv := v.Field(i)
		switch {
		case topicNameField(st, f):
			for _, name := range stringsOf(fv) {
				named = true
				if !visit(name, [16]byte{}) {
					return false
				}
			}
		case topicIDField(f):
			id = fv.Interface().([16]byte)
		case f.IsExported():
			if !walkTopicRefs(fv, visit) {
				return false
			}
		}
	}
	if !named && id != ([16]byte{}) {
		return visit("", id)
	}
	return true
}

// stringsOf is the non-empty strings a string, *string or []string holds.
func stringsOf(v reflect.Value) []string {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); s != "" {
			return []string{s}
		}
	case reflect.Pointer:
		if !v.IsNil() && v.Elem().String() != "" {
			return []string{v.Elem().String()}
		}
	case reflect.Slice:
		out := make([]string, 0, v.Len())
		for i := 0; i < v.Len(); i++ {
			if s := v.Index(i).String(); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// namesHiddenTopic reports whether v names a topic the principal may not
// describe, or one by an id kproxy cannot name (failing closed).
func (c *reqCtx) namesHiddenTopic(v any) bool { return c.hidesTopic(v, false) }

// assignsHiddenTopic is namesHiddenTopic for an assignment, whose ids
// kproxy cannot name pass: the member's topics were authorized by name
// when it subscribed.
func (c *reqCtx) assignsHiddenTopic(v any) bool { return c.hidesTopic(v, true) }

func (c *reqCtx) hidesTopic(v any, unknownIDsPass bool) bool {
	return !topicRefs(v, func(name string, id [16]byte) bool {
		if name == "" {
			var ok bool
			if name, ok = c.topicName("", id); !ok {
				return unknownIDsPass
			}
		}
		return c.visible(OpDescribe, ResTopic, name)
	})
}
