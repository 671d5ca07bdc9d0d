package engine

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// topLevelErrorCode is resp's top-level ErrorCode field, or -1 for a
// response that has none (Produce, Metadata, Fetch before v7). Only for
// responses already decoded: it reads the kmsg struct by reflection
// rather than keeping a list of the ~90 response types in step with kmsg.
func topLevelErrorCode(resp kmsg.Response) int16 {
	v := reflect.ValueOf(resp)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return -1
	}
	if f := v.FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 {
		return int16(f.Int())
	}
	return -1
}
