package policy

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRevealingAPIsHaveHandling: every API a principal without a cluster
// permission can call, whose response can name a topic, group or
// transactional id, has its handling written down (revealHandlings).
func TestRevealingAPIsHaveHandling(t *testing.T) {
	for key, fields := range revealFields() {
		named := false
		for _, f := range fields {
			named = named || (f.kind != revealMessage && f.kind != revealOps)
		}
		if !named {
			continue
		}
		if _, ok := revealHandlings[key]; ok {
			continue
		}
		if h := revealHandling(key); h != handledCluster {
			t.Errorf("%s's response names resources (%v) and has no entry in revealHandlings", kmsg.NameForKey(key), fields)
		}
	}
}

// TestTopicRefsFindsEveryTopicField: the walker the group checks use finds
// every topic field the reveal list classifies, in every response type.
func TestTopicRefsFindsEveryTopicField(t *testing.T) {
	for key, fields := range revealFields() {
		want := 0
		for _, f := range fields {
			if f.kind == revealTopic || f.kind == revealTopicID {
				want++
			}
		}
		if want == 0 {
			continue
		}
		resp := kmsg.ResponseForKey(key)
		fillAll(reflect.ValueOf(resp), 0)
		got := 0
		topicRefs(resp, func(string, [16]byte) bool { got++; return true })
		if got == 0 {
			t.Errorf("%s: topicRefs found no topic in a populated response (the list has %d fields)", kmsg.NameForKey(key), want)
		}
	}
}

// fillAll sets every string to "t", every id to non-zero and every list to
// one element, to any depth kmsg's types reach.
func fillAll(v reflect.Value, depth int) {
	if depth > 20 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillAll(v.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() && f.Name != "UnknownTags" {
				fillAll(v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString("t")
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if v.Index(i).Kind() == reflect.Uint8 {
				v.Index(i).SetUint(1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillAll(v.Index(0), depth+1)
	}
}
