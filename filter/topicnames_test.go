package filter_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kproxy/kproxy/filter"
)

// TestTopicNamesLearnsFromMetadata: a topic named with its id is learned
// and renamed by a later response; a topic with an error, without an id or
// without a name is not.
func TestTopicNamesLearnsFromMetadata(t *testing.T) {
	metadata := func(topics ...kmsg.MetadataResponseTopic) *kmsg.MetadataResponse {
		resp := kmsg.NewPtrMetadataResponse()
		resp.Topics = topics
		return resp
	}
	topic := func(name string, id byte, errCode int16) kmsg.MetadataResponseTopic {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic, t.TopicID, t.ErrorCode = kmsg.StringPtr(name), [16]byte{id}, errCode
		return t
	}
	unnamed := topic("", 4, 0)
	unnamed.Topic = nil

	var names filter.TopicNames
	if _, ok := names.Lookup([16]byte{1}); ok {
		t.Fatal("an empty TopicNames named a topic")
	}
	if err := names.Learn(metadata(topic("orders", 1, 0), topic("denied", 2, 29), topic("no-id", 0, 0), unnamed)); err != nil {
		t.Fatal(err)
	}
	if err := names.Learn(metadata(topic("payments", 3, 0))); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[byte]string{1: "orders", 3: "payments"} {
		if got, ok := names.Lookup([16]byte{id}); !ok || got != want {
			t.Errorf("Lookup(%d) = %q, %v; want %q", id, got, ok, want)
		}
	}
	for _, id := range []byte{2, 0, 4} {
		if got, ok := names.Lookup([16]byte{id}); ok {
			t.Errorf("Lookup(%d) = %q; want no name", id, got)
		}
	}
	if err := names.Learn(metadata(topic("orders-renamed", 1, 0))); err != nil {
		t.Fatal(err)
	}
	if got, _ := names.Lookup([16]byte{1}); got != "orders-renamed" {
		t.Errorf("after a rename Lookup(1) = %q; want orders-renamed", got)
	}
	var none *filter.TopicNames
	if _, ok := none.Lookup([16]byte{1}); ok {
		t.Error("a nil TopicNames named a topic")
	}
}
