package lowpriv

import (
	"reflect"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// probeNames are the resources a probe request names wherever its API has
// a place for one.
type probeNames struct {
	topic, group, txn string
	topicID           [16]byte
}

// secretNames are the topic and transactional id the principal may not
// touch, as they exist upstream, with group.
func (e *lowprivEnv) secretNames(group string) probeNames {
	return probeNames{topic: secretTopic, group: group, txn: secretTxn, topicID: e.topicIDs[secretTopic]}
}

// ghostNames are a topic, topic id and transactional id that exist
// nowhere, with group.
func ghostNames(group string) probeNames {
	return probeNames{topic: "ghost-topic", group: group, txn: "ghost-txn", topicID: [16]byte{0x6b, 0x70, 0x72, 0x6f, 0x78, 0x79}}
}

// nameFor is the name a probe puts in the string field called field.
func (n probeNames) nameFor(field string) string {
	switch {
	case strings.Contains(field, "Transactional"):
		return n.txn
	case strings.Contains(field, "Topic"), field == "ResourceName":
		return n.topic
	case strings.Contains(field, "Group"), strings.HasPrefix(field, "CoordinatorKey"):
		return n.group
	}
	return "x"
}

// probeRequest is a request for key at version naming n's resources in
// every list and field it has: one element per list, every topic, group
// and transactional id field set, every topic id field n's id, and every
// resource type a topic (so a resource name is a topic's).
func probeRequest(key, version int16, n probeNames) kmsg.Request {
	req := kmsg.RequestForKey(key)
	fillProbe(reflect.ValueOf(req), "", n, 0)
	req.SetVersion(version)
	if p, ok := req.(*kmsg.ProduceRequest); ok {
		p.Acks = -1 // acks=0 would owe no answer
	}
	return req
}

var topicIDType = reflect.TypeOf([16]byte{})

func fillProbe(v reflect.Value, field string, n probeNames, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			if v.Type().Elem().Kind() == reflect.Uint8 {
				return
			}
			v.Set(reflect.New(v.Type().Elem()))
			setDefaults(v)
		}
		fillProbe(v.Elem(), field, n, depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Name != "UnknownTags" && f.Name != "Version" {
				fillProbe(v.Field(i), f.Name, n, depth+1)
			}
		}
		// A config or ACL resource's name is a topic's (kmsg's
		// ConfigResourceType and ACLResourceType both spell Topic 2).
		if rt := v.FieldByName("ResourceType"); rt.IsValid() && rt.Kind() == reflect.Int8 {
			rt.SetInt(2)
		}
	case reflect.String:
		v.SetString(n.nameFor(field))
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // records, assignments, metadata: empty
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		if el := v.Index(0); el.Kind() == reflect.Struct {
			setDefaults(el.Addr())
		}
		fillProbe(v.Index(0), field, n, depth+1)
	case reflect.Array:
		if v.Type() == topicIDType && strings.Contains(field, "TopicID") {
			v.Set(reflect.ValueOf(n.topicID))
		}
	}
}

// setDefaults applies kmsg's defaults to the struct p points to.
func setDefaults(p reflect.Value) {
	if d, ok := p.Interface().(interface{ Default() }); ok {
		d.Default()
	}
}

// errorCodes returns every ErrorCode field of v, at any depth, sorted.
func errorCodes(v any) []int16 {
	var codes []int16
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				if f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16 {
					codes = append(codes, int16(v.Field(i).Int()))
				}
				walk(v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(v))
	slices.Sort(codes)
	return codes
}
