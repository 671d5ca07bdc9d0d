package engine

import (
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEveryAPIHasAnErrorScope fails for an API kmsg knows that
// responseErrorScope does not classify, and for a class its response
// type contradicts: per entry without error codes in entries, top-level
// only with some in entries (they would go uncounted), none with any.
func TestEveryAPIHasAnErrorScope(t *testing.T) {
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		resp := kmsg.ResponseForKey(key)
		if resp == nil {
			continue
		}
		typ := reflect.TypeOf(resp).Elem()
		top := hasErrorCode(typ)
		nested := entriesHaveErrorCodes(typ)
		want := errorsNone
		switch {
		case nested:
			want = errorsPerEntry
		case top:
			want = errorsTopLevel
		}
		if got := responseErrorScope(key); got != want {
			t.Errorf("%s (key %d): error scope %d, want %d (top-level code: %v, entries with codes: %v)", kmsg.NameForKey(key), key, got, want, top, nested)
		}
	}
}

func hasErrorCode(t reflect.Type) bool {
	f, ok := t.FieldByName("ErrorCode")
	return ok && f.Type.Kind() == reflect.Int16
}

// entriesHaveErrorCodes says whether a struct or a slice of structs
// within struct type t, at any depth, has an ErrorCode.
func entriesHaveErrorCodes(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		ft := t.Field(i).Type
		if ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && (hasErrorCode(ft) || entriesHaveErrorCodes(ft)) {
			return true
		}
	}
	return false
}

// TestEntryErrorCodes checks that each topic's and partition's non-zero
// code is reported once, and the top-level one is left out.
func TestEntryErrorCodes(t *testing.T) {
	resp := kmsg.NewPtrMetadataResponse()
	for _, code := range []int16{0, kerr.TopicAuthorizationFailed.Code} {
		topic := kmsg.NewMetadataResponseTopic()
		topic.ErrorCode = code
		for _, pc := range []int16{0, kerr.NotLeaderForPartition.Code, kerr.NotLeaderForPartition.Code} {
			p := kmsg.NewMetadataResponseTopicPartition()
			p.ErrorCode = pc
			topic.Partitions = append(topic.Partitions, p)
		}
		resp.Topics = append(resp.Topics, topic)
	}
	var got noted
	entryErrorCodes(resp, &got)
	slices.Sort(got)
	want := []int16{kerr.NotLeaderForPartition.Code, kerr.NotLeaderForPartition.Code, kerr.NotLeaderForPartition.Code, kerr.NotLeaderForPartition.Code, kerr.TopicAuthorizationFailed.Code}
	slices.Sort(want)
	if !slices.Equal([]int16(got), want) {
		t.Errorf("entry error codes %v, want %v", got, want)
	}

	top := kmsg.NewPtrJoinGroupResponse()
	top.ErrorCode = kerr.GroupAuthorizationFailed.Code
	var topGot noted
	entryErrorCodes(top, &topGot)
	if len(topGot) != 0 {
		t.Errorf("JoinGroup: entry codes %v reported; its one code is top-level", topGot)
	}
}

// noted keeps the error codes a walk hands it.
type noted []int16

func (n *noted) NoteError(code int16) { *n = append(*n, code) }
