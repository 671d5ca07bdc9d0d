package encryption

import (
	"reflect"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// TestEveryKeyIsClassified walks every API key kmsg knows: a key whose
// request or response has a field of record bytes (Records,
// RecordBatches) must be encrypted or decrypted, and the filter must
// handle exactly those, in that direction; all others are passed. A kmsg
// upgrade adding an API with records fails here until it is classed.
func TestEveryKeyIsClassified(t *testing.T) {
	f := &Filter{log: zerolog.Nop()}
	var r filter.Registry
	f.Register(&r)
	requests, responses := map[int16]bool{}, map[int16]bool{}
	for _, h := range r.Requests() {
		requests[h.Key] = true
	}
	for _, h := range r.Responses() {
		responses[h.Key] = true
	}
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		name := kmsg.NameForKey(key)
		inRequest, inResponse := hasRecords(reflect.TypeOf(req)), hasRecords(reflect.TypeOf(req.ResponseKind()))
		switch c := classOf(key); {
		case inRequest && c != encrypted, inResponse && c != decrypted:
			t.Errorf("%s (%d) carries records (request %v, response %v) but is classed %d", name, key, inRequest, inResponse, c)
		case !inRequest && !inResponse && c != passed:
			t.Errorf("%s (%d) carries no records but is classed %d", name, key, c)
		case requests[key] != (c == encrypted):
			t.Errorf("%s (%d): request handler registered %v, class %d", name, key, requests[key], c)
		case key != kmsg.Metadata.Int16() && responses[key] != (c == decrypted):
			t.Errorf("%s (%d): response handler registered %v, class %d", name, key, responses[key], c)
		}
	}
}

// hasRecords reports whether t, a kmsg message type, has a []byte field
// named Records or RecordBatches anywhere in it.
func hasRecords(t reflect.Type) bool {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type) bool
	walk = func(t reflect.Type) bool {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return false
		}
		seen[t] = true
		for i := range t.NumField() {
			fl := t.Field(i)
			if (fl.Name == "Records" || fl.Name == "RecordBatches") && fl.Type == reflect.TypeOf([]byte(nil)) {
				return true
			}
			if walk(fl.Type) {
				return true
			}
		}
		return false
	}
	return walk(t)
}
