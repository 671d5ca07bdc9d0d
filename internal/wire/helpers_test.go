package wire

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The helpers here encode headers by hand, independently of the code under
// test, and ask kmsg (not the API table) what is flexible, so the tests check the
// protocol package against the Kafka wire format rather than against itself.

// taggedField is one unknown tagged field of a flexible header.
type taggedField struct {
	tag  uint64
	data []byte
}

// appendTags appends a tagged-field section: an unsigned varint count, then
// per field its tag, its size and its bytes.
func appendTags(dst []byte, tags []taggedField) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(tags)))
	for _, f := range tags {
		dst = binary.AppendUvarint(dst, f.tag)
		dst = binary.AppendUvarint(dst, uint64(len(f.data)))
		dst = append(dst, f.data...)
	}
	return dst
}

// encodeRequestHeader writes a request header: v1 (key, version,
// correlation id, nullable int16 client id) and, if flexible, the v2 tagged
// fields. clientID nil is the null client id.
func encodeRequestHeader(key, version int16, corr int32, clientID *string, flexible bool, tags []taggedField) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if clientID == nil {
		b = binary.BigEndian.AppendUint16(b, 0xffff)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(*clientID)))
		b = append(b, *clientID...)
	}
	if flexible {
		b = appendTags(b, tags)
	}
	return b
}

// kmsgKeys is every API key kmsg has a request type for, in order.
func kmsgKeys(t testing.TB) []int16 {
	t.Helper()
	var keys []int16
	for key := int16(0); kmsg.NameForKey(key) != "Unknown"; key++ {
		if kmsg.RequestForKey(key) == nil {
			t.Fatalf("kmsg names key %d %q but has no request for it", key, kmsg.NameForKey(key))
		}
		keys = append(keys, key)
	}
	if len(keys) < 70 {
		t.Fatalf("kmsg knows only %d keys; expected a modern kmsg", len(keys))
	}
	return keys
}

// kmsgMaxVersion is kmsg's highest version of key.
func kmsgMaxVersion(key int16) int16 { return kmsg.RequestForKey(key).MaxVersion() }

// kmsgFlexible asks kmsg whether msg at version is flexible, treating a
// version above kmsg's max like the max.
func kmsgFlexible(msg interface {
	MaxVersion() int16
	SetVersion(int16)
	IsFlexible() bool
}, version int16) bool {
	msg.SetVersion(min(version, msg.MaxVersion()))
	return msg.IsFlexible()
}

// kmsgRequestFlexible asks kmsg whether version of key is flexible.
func kmsgRequestFlexible(key, version int16) bool {
	return kmsgFlexible(kmsg.RequestForKey(key), version)
}

// kmsgResponseFlexible asks kmsg whether the response body to version of key
// is flexible. (The response header is flexible too, except for ApiVersions.)
func kmsgResponseFlexible(key, version int16) bool {
	return kmsgFlexible(kmsg.ResponseForKey(key), version)
}

// flexBoundary returns the last non-flexible and the first flexible version
// of key per kmsg, each -1 when there is none.
func flexBoundary(key int16) (lastNonFlexible, firstFlexible int16) {
	lastNonFlexible, firstFlexible = -1, -1
	for v := int16(0); v <= kmsgMaxVersion(key); v++ {
		if kmsgRequestFlexible(key, v) {
			firstFlexible = v
			break
		}
		lastNonFlexible = v
	}
	return lastNonFlexible, firstFlexible
}

// boundaryVersions is the last non-flexible and the first flexible version
// of key, whichever exist.
func boundaryVersions(key int16) []int16 {
	last, first := flexBoundary(key)
	var vs []int16
	if last >= 0 {
		vs = append(vs, last)
	}
	if first >= 0 {
		vs = append(vs, first)
	}
	return vs
}

func strPtr(s string) *string { return &s }

func describeClientID(id *string) string {
	if id == nil {
		return "null"
	}
	if *id == "" {
		return "empty"
	}
	return "len" + strconv.Itoa(len(*id))
}

// rowOf is key's row in the built-in table.
func rowOf(key int16) API {
	a, ok := APIs().API(key)
	if !ok {
		panic(fmt.Sprintf("no row for key %d", key))
	}
	return a
}
